import type { FirstEvent } from './store-event-batch.js';

/** The 200 body of a webhook: what the sender may act on. */
export interface WebhookAnswer {
  status: 'received' | 'replied' | 'skipped' | 'failed';
  event_id: string;
  reply?: string;
  error?: string;
  duplicate?: true;
}

/** A new event: stored, its reply not ready yet. */
export const receivedAnswer = (eventId: string): WebhookAnswer => ({
  status: 'received',
  event_id: eventId,
});

/** A duplicate is answered with its first event as it stands now. */
export function duplicateAnswer(first: FirstEvent): WebhookAnswer {
  switch (first.status) {
    case 'replied':
      return { status: 'replied', event_id: first.id, reply: first.reply ?? '', duplicate: true };
    case 'skipped':
      return { status: 'skipped', event_id: first.id, duplicate: true };
    case 'failed':
      return { status: 'failed', event_id: first.id, error: first.error ?? '', duplicate: true };
    default:
      return { status: 'received', event_id: first.id, duplicate: true };
  }
}

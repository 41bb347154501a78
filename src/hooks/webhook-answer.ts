import type { AnswerRow } from '../events/event-answers-repo.js';
import { answerOf, type EventAnswer } from '../events/event-answers.js';
import type { FirstEvent } from './store-event-batch.js';

/** The 200 body of a webhook: what the sender may act on (see src/events/event-answers.ts). */
export type WebhookAnswer = EventAnswer & { duplicate?: true };

/** A duplicate is answered with its first event as it stands (or once it finishes, waiting). */
export function duplicateAnswer(first: FirstEvent | EventAnswer): WebhookAnswer {
  const answer = 'event_id' in first ? first : answerOf(first as AnswerRow);
  return { ...answer, duplicate: true };
}

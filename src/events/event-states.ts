/**
 * The event lifecycle, in one place:
 *
 *   pending → processing → replied | skipped | failed
 *                ↓
 *             pending (a retry after a passing failure, or given back at shutdown)
 *             processing (taken over by another worker when the lease ran out)
 *             awaiting_approval → pending (an operator decided, or the wait timed out)
 *
 * and `rejected` for refused requests and `filtered` for payloads the channel's `accept_when` does
 * not accept, which never enter the queue. An admin's replay puts a
 * finished event back to `pending` (REPLAY_FROM), outside the queue statements. The database's CHECK
 * constraint, the queue statements (`src/worker/queue-*.ts`) and every filter are held to this
 * list by test/events/event-states.test.ts.
 */
export const EVENT_STATUSES = [
  'pending',
  'processing',
  'awaiting_approval',
  'replied',
  'skipped',
  'failed',
  'rejected',
  'filtered',
] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** In the queue: waiting for a worker, or held by one. */
export const QUEUED_STATUSES = ['pending', 'processing'] as const;

/**
 * Not finished: in the queue, or parked out of it while an operator decides on a tool call
 * (`awaiting_approval` holds no worker and is never claimed).
 */
export const UNFINISHED_STATUSES = [...QUEUED_STATUSES, 'awaiting_approval'] as const;
export type UnfinishedStatus = (typeof UNFINISHED_STATUSES)[number];

/** Done: the queue will not change them (retention may delete them; a replay asks again). */
export const FINISHED_STATUSES = ['replied', 'skipped', 'failed', 'rejected', 'filtered'] as const;
export type FinishedStatus = (typeof FINISHED_STATUSES)[number];

/** What a replay (POST /api/v1/events/{id}/replay) takes back to `pending`. */
export const REPLAY_FROM = FINISHED_STATUSES;

/** How the worker can end an event. */
export const REPLY_OUTCOMES = ['replied', 'skipped', 'failed'] as const;
export type ReplyOutcomeStatus = (typeof REPLY_OUTCOMES)[number];

/** Every status change the service makes; an event is stored as `pending`, `rejected` or `filtered`. */
export const EVENT_TRANSITIONS: Readonly<Record<EventStatus, readonly EventStatus[]>> = {
  pending: ['processing'],
  // `processing` again: another worker takes over an event whose lease ran out.
  processing: ['processing', 'pending', 'awaiting_approval', 'replied', 'skipped', 'failed'],
  awaiting_approval: ['pending'],
  replied: [],
  skipped: [],
  failed: [],
  rejected: [],
  filtered: [],
};

/** The statuses an event may be stored with by the receiver. */
export const INITIAL_STATUSES = ['pending', 'rejected', 'filtered'] as const;

export function isEventStatus(text: string): text is EventStatus {
  return (EVENT_STATUSES as readonly string[]).includes(text);
}

/** A status list as an SQL literal, e.g. `('pending', 'processing')`, for `status in …`. */
export function sqlStatusList(statuses: readonly EventStatus[]): string {
  return `(${statuses.map((status) => `'${status}'`).join(', ')})`;
}

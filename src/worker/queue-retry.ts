import type { Queryable } from '../db/database.js';

/**
 * Puts an event whose AI call failed for a passing reason back in the queue, due after an
 * exponential backoff: `baseMs` × 2^(attempts − 1), at most one hour, of which a random half
 * is dropped ("equal jitter") so events that failed together are not all retried together.
 * Computed in SQL so the delay is measured on the database clock, the one `claimEvents` reads.
 * The error is kept so Brain Logs shows why the event is waiting. Only the lock owner may
 * do this (see `finishEvent`); resolves to false when it no longer held the event.
 */
export async function retryEvent(
  db: Queryable,
  eventId: string,
  workerId: string,
  error: string,
  baseMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update events set
       status = 'pending',
       error = $3,
       run_at = now()
         + least($4::float8 * power(2, attempts - 1), 3600000)
         * (0.5 + random() / 2)
         * interval '1 millisecond',
       locked_by = null,
       locked_until = null
     where id = $1 and locked_by = $2 and status = 'processing'`,
    [eventId, workerId, error, baseMs],
  );
  return rowCount > 0;
}

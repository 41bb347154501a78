import type { Queryable } from '../db/database.js';

/** An event reserved for one worker, with what it needs to be answered. */
export interface ClaimedEvent {
  id: string;
  payload: string;
  /** AI calls made so far (by any worker). */
  attempts: number;
  /** The last error, kept from an earlier attempt. */
  error: string | null;
  /** The channel's template as it is now, not as it was when the event arrived. */
  template: string;
}

/**
 * Reserves up to `limit` due events for `workerId` until `leaseMs` from now, in one statement
 * that commits before any AI call is made: no transaction and no row lock outlives it.
 *
 * - `for update skip locked` locks the chosen rows for the few microseconds of this statement
 *   and makes concurrent claims (other processes, other workers) skip them instead of waiting,
 *   so no two claims return the same event. PostgreSQL re-checks the where clause on the
 *   newest row version after locking, so a row another worker changed in the meantime is
 *   not taken on the strength of the old version.
 * - While an event is `processing`, `run_at` holds the end of its lease (so does
 *   `locked_until`, which is what people read). One condition, `run_at <= now()`, therefore
 *   finds both pending events that are due and processing events whose worker died or hung
 *   past its lease, and the partial queue index (run_at, id) serves it: only unfinished
 *   events are in that index.
 * - `locked_by` names the claiming worker; every later statement on the event checks it, so a
 *   worker that lost its lease to another cannot overwrite the other's result.
 * - The channel's template is read in the same statement: the reply follows the template as
 *   it is when the event is processed.
 */
export async function claimEvents(
  db: Queryable,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedEvent[]> {
  const { rows } = await db.query<ClaimedEvent>(
    `with next as (
       select id from events
       where status in ('pending', 'processing') and run_at <= now()
       order by run_at, id
       limit $2
       for update skip locked
     )
     update events set
       status = 'processing',
       locked_by = $1,
       locked_until = now() + $3::integer * interval '1 millisecond',
       run_at = now() + $3::integer * interval '1 millisecond'
     from next, channels
     where events.id = next.id and channels.id = events.channel_id
     returning events.id, events.payload, events.attempts, events.error, channels.template`,
    [workerId, limit, leaseMs],
  );
  return rows;
}

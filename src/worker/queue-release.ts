import type { Queryable } from '../db/database.js';

/**
 * Gives an event back unanswered (the worker is shutting down and cut its AI call short), due
 * at once so another process need not wait for the lease to run out. The attempt it used stays
 * counted: a call was made. Only the lock owner may release (see `finishEvents`).
 */
export async function releaseEvent(
  db: Queryable,
  eventId: string,
  workerId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update events set status = 'pending', run_at = now(), locked_by = null, locked_until = null
     where id = $1 and locked_by = $2 and status = 'processing'`,
    [eventId, workerId],
  );
  return rowCount > 0;
}

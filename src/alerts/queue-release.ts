import type { Queryable } from '../db/database.js';

/**
 * Gives back a notification claimed and never sent, due at once: the attempt its claim counted
 * is taken back. Only the lease owner may release it.
 */
export async function releaseNotification(
  db: Queryable,
  id: string,
  workerId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update alert_changes
     set attempts = greatest(attempts - 1, 0), locked_by = null, locked_until = null
     where id = $1 and locked_by = $2 and notification = 'pending'`,
    [id, workerId],
  );
  return rowCount > 0;
}

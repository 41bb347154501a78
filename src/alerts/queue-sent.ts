import type { Queryable } from '../db/database.js';

/**
 * Ends a notification its receiver took. Matching `locked_by` keeps a process whose lease ran
 * out from writing over the one that took the notification on; false when this one no longer
 * held it.
 */
export async function markSent(db: Queryable, id: string, workerId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `update alert_changes
     set notification = 'sent', sent_at = now(), locked_by = null, locked_until = null,
         last_error = null
     where id = $1 and locked_by = $2 and notification = 'pending'`,
    [id, workerId],
  );
  return rowCount > 0;
}

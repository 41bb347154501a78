import type { Queryable } from '../db/database.js';

export interface FailedNotification {
  error: string;
  /** No further attempt can help (the receiver refused it for good): fail now. */
  final: boolean;
  /** At least this long before the next attempt (the receiver's Retry-After), in ms. */
  notBeforeMs: number;
}

/** How often, and how far apart, a notification is attempted. */
export interface NotificationRetries {
  /** Attempts before it is given up (`failed`). */
  maxAttempts: number;
  /** The wait after the first failed attempt; each further one doubles it. */
  baseMs: number;
}

/**
 * Records a failed attempt: due again after `baseMs` × 2^(attempts − 1), or the receiver's
 * Retry-After when longer, or `failed` for good when final or out of attempts. The wait is held
 * in `locked_until` (the claim's test of "due") and computed in SQL, on the database clock the
 * claim reads. Only the lease owner writes; resolves to the notification's state, or undefined
 * when this process no longer held it.
 */
export async function retryNotification(
  db: Queryable,
  id: string,
  workerId: string,
  failure: FailedNotification,
  retries: NotificationRetries,
): Promise<'pending' | 'failed' | undefined> {
  const { rows } = await db.query<{ notification: 'pending' | 'failed' }>(
    `update alert_changes set
       notification = case when $4::boolean or attempts >= $6 then 'failed' else 'pending' end,
       locked_by = null,
       locked_until = case when $4::boolean or attempts >= $6 then null else now() + greatest(
         $7::float8 * power(2, attempts - 1), $5::float8
       ) * interval '1 millisecond' end,
       last_error = $3
     where id = $1 and locked_by = $2 and notification = 'pending'
     returning notification`,
    [
      id,
      workerId,
      failure.error.slice(0, 1000),
      failure.final,
      failure.notBeforeMs,
      retries.maxAttempts,
      retries.baseMs,
    ],
  );
  return rows[0]?.notification;
}

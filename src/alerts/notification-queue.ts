import type { Queryable } from '../db/database.js';
import type { AlertState } from './alert-states.js';

/** A change whose notification this process now holds (under a lease) and sends. */
export interface ClaimedNotification {
  id: string;
  alert_id: string;
  state: AlertState;
  value: number | null;
  changed_at: Date;
  attempts: number;
}

/**
 * Claims up to `limit` notifications that are due, each under a lease of `leaseMs`: no other
 * process sends it meanwhile. An alert's changes are sent in order: one waiting behind an
 * earlier unsent change of the same alert is not due.
 */
export async function claimNotifications(
  db: Queryable,
  limit: number,
  leaseMs: number,
): Promise<ClaimedNotification[]> {
  const { rows } = await db.query<ClaimedNotification>(
    `update alert_changes c
     set attempts = c.attempts + 1, locked_until = now() + make_interval(secs => $2::float8 / 1000)
     where c.id in (
       select p.id from alert_changes p
       where p.notification = 'pending' and (p.locked_until is null or p.locked_until < now())
         and not exists (
           select 1 from alert_changes o
           where o.alert_id = p.alert_id and o.notification = 'pending' and o.id < p.id
         )
       order by p.id
       limit $1
       for update skip locked
     )
     returning c.id::text, c.alert_id::text, c.state, c.value, c.changed_at, c.attempts`,
    [limit, leaseMs],
  );
  return rows;
}

export async function markSent(db: Queryable, id: string): Promise<void> {
  await db.query(
    `update alert_changes
     set notification = 'sent', sent_at = now(), locked_until = null, last_error = null
     where id = $1 and notification = 'pending'`,
    [id],
  );
}

/**
 * Records a failed attempt: due again after `retryMs` (held by its lease until then), or
 * `failed` for good when `final`.
 */
export async function markAttemptFailed(
  db: Queryable,
  id: string,
  error: string,
  retryMs: number,
  final: boolean,
): Promise<void> {
  await db.query(
    `update alert_changes
     set notification = case when $4 then 'failed' else 'pending' end,
         locked_until = case when $4 then null else now() + make_interval(secs => $3::float8 / 1000) end,
         last_error = $2
     where id = $1 and notification = 'pending'`,
    [id, error.slice(0, 1000), retryMs, final],
  );
}

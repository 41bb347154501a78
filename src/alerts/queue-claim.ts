import type { Queryable } from '../db/database.js';
import type { AlertState } from './alert-states.js';

/** A change whose notification this process now holds (under a lease) and sends. */
export interface ClaimedNotification {
  id: string;
  alert_id: string;
  state: AlertState;
  value: number | null;
  changed_at: Date;
  /** Attempts so far, this one included. */
  attempts: number;
}

/**
 * Claims up to `limit` notifications that are due for `workerId`, each under a lease of
 * `leaseMs`: no other process sends it meanwhile, and only `workerId` may finish it. The attempt
 * is counted here. An alert's changes are sent in order: one waiting behind an earlier unsent
 * change of the same alert is not due, so one claim holds at most one change of each alert.
 * A failed attempt waits for its retry under `locked_until` too (see `retryNotification`).
 */
export async function claimNotifications(
  db: Queryable,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedNotification[]> {
  const { rows } = await db.query<ClaimedNotification>(
    `update alert_changes c
     set attempts = c.attempts + 1,
         locked_by = $2,
         locked_until = now() + make_interval(secs => $3::float8 / 1000)
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
    [limit, workerId, leaseMs],
  );
  return rows;
}

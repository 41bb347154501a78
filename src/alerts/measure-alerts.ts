import type { Database } from '../db/database.js';
import { LAST_DELIVERIES, MEASURE_ALERT } from './alert-conditions.js';

/**
 * Measures every enabled alert and records each change of state, with its notification, in one
 * transaction; says how many alerts changed, or undefined when another process was evaluating.
 *
 * One process at a time evaluates, however many run the worker: the transaction-scoped advisory
 * lock is taken without waiting, and a process that does not get it skips this interval. The
 * update compares the stored state as well, so a change is recorded once even without the lock.
 */
export async function measureAlerts(db: Database): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>(
      `select pg_try_advisory_xact_lock(hashtext('hookprompt:alerts')) as locked`,
    );
    if (!rows[0]?.locked) return undefined;
    // The statement's estimated cost, summed over every rule's arms, would have PostgreSQL
    // compile it (JIT) at each run: that takes far longer than running it.
    await tx.query('set local jit = off');
    const changed = await tx.query(
      `with ${LAST_DELIVERIES}, measured as (
         select a.id, m.value,
                case when coalesce(m.firing, false) then 'firing' else 'ok' end as state
         from alerts a
         join workspaces w on w.id = a.workspace_id
         cross join lateral (${MEASURE_ALERT}) m
         where a.enabled
       ), changed as (
         update alerts a
         set state = m.state, since = now(), last_value = m.value, updated_at = now()
         from measured m
         where a.id = m.id and a.enabled and a.state <> m.state
         returning a.id, a.state, a.last_value, a.since
       )
       insert into alert_changes (alert_id, state, value, changed_at)
       select id, state, last_value, since from changed
       returning id`,
    );
    return changed.rows.length;
  });
}

import type { Database } from '../db/database.js';
import { FAILING_TARGETS, MEASURE_ALERT } from './alert-conditions.js';

/**
 * Measures every enabled alert and records each change of state, with its notification, in one
 * transaction; says how many alerts changed, or undefined when another process was evaluating.
 *
 * An alert turns only once its measure has said the other state at every check for `for_s`
 * seconds: `turning_since` holds when that began, and is cleared by a check that agrees with the
 * state again. With `for_s` 0 the first such check turns it.
 *
 * One process at a time evaluates, however many run the worker: the transaction-scoped advisory
 * lock is taken without waiting, and a process that does not get it skips this interval. The
 * update writes only over the state and `turning_since` it judged, so a change is recorded once
 * even without the lock.
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
      `with ${FAILING_TARGETS}, measured as (
         select a.id, a.state as was, a.turning_since as turning_was, m.value,
                case when coalesce(m.firing, false) then 'firing' else 'ok' end as state,
                a.for_s
         from alerts a
         join workspaces w on w.id = a.workspace_id
         cross join lateral (${MEASURE_ALERT}) m
         where a.enabled
       ), judged as (
         select m.*, m.state <> m.was as differs,
                m.state <> m.was
                  and coalesce(m.turning_was, now()) <= now() - make_interval(secs => m.for_s)
                  as turns
         from measured m
         where m.state <> m.was or m.turning_was is not null
       ), updated as (
         update alerts a
         set state = case when j.turns then j.state else a.state end,
             since = case when j.turns then now() else a.since end,
             last_value = case when j.turns then j.value else a.last_value end,
             turning_since = case when j.differs and not j.turns then coalesce(a.turning_since, now()) end,
             updated_at = case when j.turns then now() else a.updated_at end
         from judged j
         where a.id = j.id and a.enabled and a.state = j.was
           and a.turning_since is not distinct from j.turning_was
         returning a.id, a.state, a.last_value, a.since, j.turns
       )
       insert into alert_changes (alert_id, state, value, changed_at)
       select id, state, last_value, since from updated where turns
       returning id`,
    );
    return changed.rows.length;
  });
}

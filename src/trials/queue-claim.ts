import type { Queryable } from '../db/database.js';
import type { StoredOutcome } from './trial-outcomes.js';
import type { TrialJudge } from './trials-schemas.js';
import { overBudget } from '../spend/budget-sql.js';

/** A result claimed to be asked, with what it is asked with. */
export interface ClaimedTrialResult {
  /** `trial_id:position`: how the queue loop knows it. */
  id: string;
  trial_id: string;
  position: number;
  event_id: string;
  workspace_id: string;
  channel_id: string;
  template: string;
  ai: unknown;
  /** Null when the event is gone (retention deleted it since the trial started). */
  payload: string | null;
  thread_key: string | null;
  budgeted: boolean;
  /** The event's stored outcome, which the judge compares the candidate's with. */
  current: StoredOutcome;
  judge: TrialJudge | null;
}

/**
 * Reserves up to `limit` unasked results of running trials for `workerId`, oldest trial first,
 * in one statement. A result whose worker died is taken again once its lease ends; results of a
 * workspace that has spent its budget wait, as its events do.
 */
export async function claimTrialResults(
  db: Queryable,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedTrialResult[]> {
  const { rows } = await db.query<ClaimedTrialResult>(
    `with next as (
       select r.trial_id, r.position from trial_results r
       join trials t on t.id = r.trial_id
       join workspaces w on w.id = t.workspace_id
       where r.candidate is null and t.status = 'running'
         and (r.locked_until is null or r.locked_until <= now())
         and not ${overBudget('w')}
       order by r.trial_id, r.position
       limit $2
       for update of r skip locked
     )
     update trial_results r set
       locked_by = $1,
       locked_until = now() + $3::integer * interval '1 millisecond'
     from next, trials t, workspaces w
     where r.trial_id = next.trial_id and r.position = next.position
       and t.id = r.trial_id and w.id = t.workspace_id
     returning r.trial_id || ':' || r.position as id, r.trial_id, r.position, r.event_id,
       t.workspace_id, t.channel_id, t.template, t.ai, r.current, t.judge,
       (select payload from events e where e.id = r.event_id) as payload,
       (select thread_key from events e where e.id = r.event_id) as thread_key,
       w.monthly_budget_usd is not null as budgeted`,
    [workerId, limit, leaseMs],
  );
  return rows;
}

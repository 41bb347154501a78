import type { Queryable } from '../db/database.js';
import type { JudgeVerdict } from './trial-judge.js';
import type { CandidateOutcome } from './trial-outcomes.js';
import type { ClaimedTrialResult } from './queue-claim.js';

/** The judge's verdict on a result, and what its calls cost (null: unknown). */
export interface JudgedOutcome {
  verdict: JudgeVerdict;
  costUsd: number | null;
}

/**
 * Stores a result's candidate outcome (and the judge's verdict, when it was asked) and counts
 * it on its trial, which is done with its last one. False when the lease was lost (another
 * worker took the result over).
 */
export async function finishTrialResult(
  db: Queryable,
  workerId: string,
  result: Pick<ClaimedTrialResult, 'trial_id' | 'position'>,
  outcome: CandidateOutcome,
  judged?: JudgedOutcome,
): Promise<boolean> {
  const { rows } = await db.query(
    `with stored as (
       update trial_results set candidate = $4::jsonb, judge = $5::jsonb, judge_cost_usd = $6,
         locked_by = null, locked_until = null
       where trial_id = $2 and position = $3 and locked_by = $1 and candidate is null
       returning trial_id
     )
     update trials set
       done = done + 1,
       status = case when status = 'running' and done + 1 >= total then 'done' else status end,
       finished_at = case when status = 'running' and done + 1 >= total then now()
                          else finished_at end
     where id = (select trial_id from stored)
     returning id`,
    [
      workerId,
      result.trial_id,
      result.position,
      JSON.stringify(outcome),
      judged ? JSON.stringify(judged.verdict) : null,
      judged?.costUsd ?? null,
    ],
  );
  return rows.length > 0;
}

import type { Queryable } from '../db/database.js';
import type { ClaimedTrialResult } from './queue-claim.js';

/** Gives back a result claimed and not asked, due at once. */
export async function releaseTrialResult(
  db: Queryable,
  workerId: string,
  result: Pick<ClaimedTrialResult, 'trial_id' | 'position'>,
): Promise<void> {
  await db.query(
    `update trial_results set locked_by = null, locked_until = null
     where trial_id = $2 and position = $3 and locked_by = $1 and candidate is null`,
    [workerId, result.trial_id, result.position],
  );
}

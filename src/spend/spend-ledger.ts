import type { Database } from '../db/database.js';
import { GroupCommit } from '../db/group-commit.js';
import type { Metrics } from '../metrics/metrics.js';
import { recordCalls, type SpentCall } from './spend-record-repo.js';

export type { SpentCall } from './spend-record-repo.js';

/** A call's record that cannot be written by then is given up (and the error said). */
const RECORD_DEADLINE_MS = 30_000;

/**
 * Where every AI call's spend is recorded, events' and trials' alike: a row of the ledger, the
 * workspace's counter of the month, and `hookprompt_ai_cost_usd_total`. Calls that end while
 * the previous record is written are written together, in one statement.
 */
export class SpendLedger {
  private readonly writes: GroupCommit<SpentCall, void>;

  constructor(
    db: Database,
    private readonly metrics: Pick<Metrics, 'aiCost' | 'modelLabel'>,
  ) {
    this.writes = new GroupCommit<SpentCall, void>(
      async (calls, deadline) => {
        await recordCalls(db, calls, deadline);
        return calls.map(() => undefined);
      },
      { maxBatchSize: 500, maxConcurrentWrites: 1 },
    );
  }

  /** Records one call; resolves once it counts toward its workspace's budget. */
  async recordSpend(call: SpentCall): Promise<void> {
    if (call.costUsd !== null) {
      const model = await this.metrics.modelLabel(call.workspaceId, call.model);
      this.metrics.aiCost.inc({ provider: call.provider, model }, call.costUsd);
    }
    return this.writes.submit(call, Date.now() + RECORD_DEADLINE_MS);
  }
}

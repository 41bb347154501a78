import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { PeriodicTask } from '../platform/periodic-task.js';
import { deleteExpiredAuditEntries } from './audit-repo.js';

const HOUR_MS = 60 * 60 * 1000;
const FIRST_RUN_DELAY_MS = 60_000;
const BATCH_SIZE = 1000;

export interface AuditRetentionOptions {
  db: Database;
  log: Logger;
  /** AUDIT_RETENTION_DAYS: entries older than this many days are deleted. */
  retentionDays: number;
  intervalMs?: number;
  firstRunDelayMs?: number;
}

/**
 * Deletes audit entries older than the retention, periodically, a batch per short transaction:
 * the only deletes the table's trigger lets through. Tests drive `runOnce()`.
 */
export class AuditRetention {
  private readonly task: PeriodicTask<number>;

  constructor(private readonly options: AuditRetentionOptions) {
    const { log, retentionDays } = options;
    this.task = new PeriodicTask({
      log,
      intervalMs: options.intervalMs ?? HOUR_MS,
      firstRunDelayMs: options.firstRunDelayMs ?? FIRST_RUN_DELAY_MS,
      failure: 'deleting expired audit entries failed; trying again at the next run',
      run: () => this.deleteExpired(),
      report: (deleted, ms) => {
        if (deleted > 0) log.info({ deleted, retentionDays, ms }, 'expired audit entries deleted');
      },
    });
  }

  /** Deletes every expired entry; says how many. */
  runOnce(): Promise<number> {
    return this.task.runOnce();
  }

  private async deleteExpired(): Promise<number> {
    const { db, retentionDays } = this.options;
    let deleted = 0;
    for (;;) {
      const batch = await db.transaction((tx) =>
        deleteExpiredAuditEntries(tx, retentionDays, BATCH_SIZE),
      );
      deleted += batch;
      if (batch < BATCH_SIZE) return deleted;
    }
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}

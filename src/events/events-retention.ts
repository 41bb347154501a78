import { setTimeout as delay } from 'node:timers/promises';
import type { Config } from '../platform/config.js';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { PeriodicTask } from '../platform/periodic-task.js';
import {
  deleteExpiredEvents,
  listWorkspaceIds,
  RETENTION_START,
  retentionCutoff,
} from './events-repo.js';

export interface RetentionOptions {
  db: Queryable;
  log: Logger;
  /** Finished events received longer ago than this many days are deleted; 0 keeps them all. */
  retentionDays: number;
  /** Events deleted per statement: each batch is its own short transaction. */
  batchSize?: number;
  /** Rest between batches, so a large backlog of old events does not monopolise the database. */
  pauseMs?: number;
  /** Time between runs. */
  intervalMs?: number;
  /** Time from `start()` to the first run. */
  firstRunDelayMs?: number;
}

export interface RetentionRun {
  deleted: number;
  /** Delete statements sent, including the last one of each workspace that found fewer than a batch. */
  batches: number;
}

export const RETENTION_BATCH_SIZE = 1000;
export const RETENTION_PAUSE_MS = 50;
const HOUR_MS = 60 * 60 * 1000;
const FIRST_RUN_DELAY_MS = 30_000;

/**
 * Deletes finished events older than the retention period (their dedup keys with them), in
 * small batches, periodically.
 * Several processes may run it at once: their batches skip each other's rows. Tests drive
 * `runOnce()`; the service calls `start()` and, on shutdown, `stop()`.
 */
export class EventsRetention {
  private readonly batchSize: number;
  private readonly pauseMs: number;
  private readonly stopping = new AbortController();
  private readonly task: PeriodicTask<RetentionRun>;

  constructor(private readonly options: RetentionOptions) {
    this.batchSize = options.batchSize ?? RETENTION_BATCH_SIZE;
    this.pauseMs = options.pauseMs ?? RETENTION_PAUSE_MS;
    const { log, retentionDays } = options;
    this.task = new PeriodicTask({
      log,
      intervalMs: options.intervalMs ?? HOUR_MS,
      firstRunDelayMs: options.firstRunDelayMs ?? FIRST_RUN_DELAY_MS,
      failure: 'deleting expired events failed; trying again at the next run',
      run: async () => {
        const run: RetentionRun = { deleted: 0, batches: 0 };
        if (retentionDays > 0) await this.deleteEvents(run);
        return run;
      },
      report: (run, ms) => {
        if (run.deleted > 0) log.info({ ...run, retentionDays, ms }, 'expired events deleted');
      },
    });
  }

  /** Deletes every expired finished event (unless stopped midway); says how many. */
  runOnce(): Promise<RetentionRun> {
    return this.task.runOnce();
  }

  private async deleteEvents(run: RetentionRun): Promise<void> {
    const { db, retentionDays } = this.options;
    // One cutoff for the whole run, so a run ends even while events keep expiring.
    const cutoff = await retentionCutoff(db, retentionDays);
    for (const workspaceId of await listWorkspaceIds(db)) {
      let after = RETENTION_START;
      for (;;) {
        if (this.stopping.signal.aborted) return;
        const batch = await deleteExpiredEvents(db, workspaceId, cutoff, after, this.batchSize);
        run.deleted += batch.deleted;
        run.batches += 1;
        if (batch.deleted < this.batchSize || !batch.last) break;
        after = batch.last;
        if (this.pauseMs > 0) await this.pause();
      }
    }
  }

  /** Runs shortly after start, then every interval, until `stop()`. */
  start(): void {
    this.task.start();
  }

  /** Ends the schedule; a run in progress stops after its current batch. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.task.stop();
  }

  private pause(): Promise<void> {
    return delay(this.pauseMs, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}

/** Retention as configured. With EVENT_RETENTION_DAYS unset or 0 a run deletes nothing. */
export function createEventsRetention(ctx: {
  config: Pick<Config, 'eventRetentionDays'>;
  db: Queryable;
  log: Logger;
}): EventsRetention {
  const days = ctx.config.eventRetentionDays;
  return new EventsRetention({ db: ctx.db, log: ctx.log, retentionDays: days });
}

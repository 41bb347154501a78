import type { Logger } from '../platform/logger.js';
import { PeriodicTask } from '../platform/periodic-task.js';
import type { ApprovalsService } from './approvals-service.js';

/** How often the waits are looked at: a timeout is applied at most this late. */
const SWEEP_INTERVAL_MS = 15_000;

/**
 * The approvals' timeout: every interval, the calls nobody decided on within APPROVAL_TIMEOUT_S
 * are denied (`approval timed out`) and their events go back to the queue. Several processes may
 * run it at once: each event is decided in its own transaction, on its locked row, once.
 * Tests drive `runOnce()`; the service calls `start()` and, on shutdown, `stop()`.
 */
export class ApprovalTimeouts {
  private readonly task: PeriodicTask<number>;

  constructor(
    approvals: Pick<ApprovalsService, 'denyExpired'>,
    log: Logger,
    intervalMs = SWEEP_INTERVAL_MS,
  ) {
    this.task = new PeriodicTask({
      log,
      intervalMs,
      failure: 'denying timed-out approvals failed; trying again at the next run',
      run: () => approvals.denyExpired(),
      report: (denied, ms) => {
        if (denied > 0) log.info({ denied, ms }, 'approvals timed out: calls denied');
      },
    });
  }

  runOnce(): Promise<number> {
    return this.task.runOnce();
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}

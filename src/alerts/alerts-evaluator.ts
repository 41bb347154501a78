import type { Database } from '../db/database.js';
import { createSenderDeps } from '../destinations/sender-deps.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { PeriodicTask } from '../platform/periodic-task.js';
import { queueSettings, queueWorkerId, type QueueSettings } from '../queue/queue-settings.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { AlertsService } from './alerts-service.js';
import { measureAlerts } from './measure-alerts.js';
import type { NotifierDeps } from './send-notification.js';
import { AlertNotifications } from './notification-queue.js';

export interface AlertsEvaluatorOptions extends NotifierDeps, QueueSettings {
  senders: NotifierDeps['senders'] & { close(): void };
  db: Database;
  log: Logger;
  /** Time between evaluations (ALERT_INTERVAL_S). */
  intervalMs: number;
  /** Writes into `locked_by` of the notifications this process holds. */
  workerId: string;
}

export interface EvaluationRun {
  /** Alerts whose state changed; undefined when another process held the evaluation. */
  changed: number | undefined;
  /** Notifications sent in this run. */
  sent: number;
}

/**
 * Checks the alerts every interval in the processes that run the worker, then sends the
 * notifications that are due (their changes, and retries whose back-off is over). Tests drive
 * `runOnce()`; the worker role calls `start()` and, on shutdown, `stop()`.
 */
export class AlertsEvaluator {
  private readonly task: PeriodicTask<EvaluationRun>;
  private readonly notifications: AlertNotifications;
  private stopped = false;

  constructor(private readonly options: AlertsEvaluatorOptions) {
    const { log } = options;
    this.notifications = new AlertNotifications(options);
    this.task = new PeriodicTask({
      log,
      intervalMs: options.intervalMs,
      failure: 'evaluating alerts failed; trying again next interval',
      run: async () => {
        const changed = await measureAlerts(options.db);
        const sent = await this.notifications.sendDue(() => this.stopped);
        return { changed, sent };
      },
      report: (run) => {
        if (run.changed) log.info(run, 'alerts changed state');
      },
    });
  }

  /** Evaluates once (unless another process is), then sends every notification that is due. */
  runOnce(): Promise<EvaluationRun> {
    return this.task.runOnce();
  }

  start(): void {
    this.task.start();
  }

  /** Ends the schedule; a run in progress finishes what it sends. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task.stop();
    await this.notifications.stop();
    this.options.senders.close();
  }
}

/**
 * The alerts' evaluator as configured. Notifications go out through the destinations' senders,
 * as channel destinations do: the same timeout and lease, and the same address policy
 * (DELIVERY_ALLOW_PRIVATE) for URLs admins typed in.
 */
export function createAlertsEvaluator(
  ctx: { config: Config; db: Database; log: Logger; alerts: AlertsService; secrets: SecretBox },
  overrides: Partial<AlertsEvaluatorOptions> = {},
): AlertsEvaluator {
  const { config } = ctx;
  return new AlertsEvaluator({
    db: ctx.db,
    log: ctx.log,
    senders: createSenderDeps(config.delivery),
    secrets: ctx.secrets,
    alertSecret: ctx.alerts.alertSecret,
    intervalMs: config.alertIntervalMs,
    ...queueSettings(config, 'send'),
    workerId: queueWorkerId('alerts'),
    ...overrides,
  });
}

import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { evaluateAlerts } from './alert-evaluate.js';
import {
  changeNotification,
  describeFailure,
  notify,
  type NotifierDeps,
} from './alert-notifier.js';
import type { SendOutcome } from '../destinations/destination-sender.js';
import { alertsByIds, type AlertToNotify, type StoredRow } from './alerts-repo.js';
import {
  claimNotifications,
  markAttemptFailed,
  markSent,
  type ClaimedNotification,
} from './notification-queue.js';

export interface AlertsEvaluatorOptions extends NotifierDeps {
  senders: NotifierDeps['senders'] & { close(): void };
  db: Database;
  log: Logger;
  /** Time between evaluations (ALERT_INTERVAL_S). */
  intervalMs: number;
  /** How long a claimed notification is held by this process: one send's limit and some. */
  leaseMs: number;
}

export interface EvaluationRun {
  /** Alerts whose state changed; undefined when another process held the evaluation. */
  changed: number | undefined;
  /** Notifications sent in this run. */
  sent: number;
}

/** Notifications claimed per round; a run sends rounds until none is due. */
const CLAIM_LIMIT = 20;
/** Attempts of one notification before it is given up (`failed`). */
const MAX_ATTEMPTS = 6;
/** The wait after the first failed attempt; each further one doubles it. */
const RETRY_BASE_MS = 30_000;

/**
 * Checks the alerts every interval in the processes that run the worker, then sends the
 * notifications of their changes. Tests drive `runOnce()`; the worker role calls `start()` and,
 * on shutdown, `stop()`.
 */
export class AlertsEvaluator {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly options: AlertsEvaluatorOptions) {}

  /** Evaluates once (unless another process is), then sends every notification that is due. */
  async runOnce(): Promise<EvaluationRun> {
    const changed = await evaluateAlerts(this.options.db);
    let sent = 0;
    for (;;) {
      const claimed = await claimNotifications(this.options.db, CLAIM_LIMIT, this.options.leaseMs);
      if (claimed.length === 0) break;
      const alerts = await alertsByIds(this.options.db, [
        ...new Set(claimed.map((c) => c.alert_id)),
      ]);
      for (const change of claimed) {
        const alert = alerts.get(change.alert_id);
        if (alert && (await this.send(alert, change))) sent += 1;
      }
      if (this.stopped) break;
    }
    return { changed, sent };
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.schedule();
  }

  /** Ends the schedule; a run in progress finishes what it sends. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.options.senders.close();
  }

  private async send(
    alert: StoredRow<AlertToNotify>,
    change: ClaimedNotification,
  ): Promise<boolean> {
    const { db, log } = this.options;
    const sent = await notify(this.options, alert, changeNotification(change)).catch(
      (error: unknown): SendOutcome => {
        // A notify that cannot even be sent (its secret or URL sealed under a key no longer
        // configured, the alert secret unreadable) is a failed attempt like any other: it
        // counts toward MAX_ATTEMPTS instead of being taken again every lease, for ever, and
        // the notifications after it in this run still go.
        log.error({ err: error, alertId: alert.id }, 'alert notification could not be sent');
        const message = error instanceof Error ? error.message : String(error);
        return { outcome: 'retry', status: null, error: message, retryAfterMs: 0, parts: 0 };
      },
    );
    if (sent.outcome === 'delivered') {
      await markSent(db, change.id);
      log.info({ alertId: alert.id, state: change.state }, 'alert notification sent');
      return true;
    }
    const final = sent.outcome === 'fail' || change.attempts >= MAX_ATTEMPTS;
    const backoffMs = RETRY_BASE_MS * 2 ** (change.attempts - 1);
    const retryMs = sent.outcome === 'retry' ? Math.max(backoffMs, sent.retryAfterMs) : 0;
    await markAttemptFailed(db, change.id, describeFailure(sent), retryMs, final);
    log.warn(
      { alertId: alert.id, state: change.state, attempts: change.attempts, final },
      'alert notification not sent',
    );
    return false;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.running = this.runAndLog().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule();
      });
    }, this.options.intervalMs).unref();
  }

  private async runAndLog(): Promise<void> {
    try {
      const run = await this.runOnce();
      if (run.changed) this.options.log.info(run, 'alerts changed state');
    } catch (error) {
      this.options.log.error(
        { err: error },
        'evaluating alerts failed; trying again next interval',
      );
    }
  }
}

import type { Database } from '../db/database.js';
import type { SendOutcome } from '../destinations/destination-sender.js';
import type { Logger } from '../platform/logger.js';
import { QueueLoop } from '../queue/queue-loop.js';
import type { QueueSettings } from '../queue/queue-settings.js';
import {
  changeNotification,
  describeFailure,
  notify,
  type NotifierDeps,
} from './send-notification.js';
import { alertsByIds, type AlertToNotify, type StoredRow } from './alerts-repo.js';
import { claimNotifications, type ClaimedNotification } from './queue-claim.js';
import { releaseNotification } from './queue-release.js';
import { retryNotification, type NotificationRetries } from './queue-retry.js';
import { markSent } from './queue-sent.js';

export interface AlertNotificationsOptions extends NotifierDeps, QueueSettings {
  db: Database;
  log: Logger;
  workerId: string;
}

/** A claimed notification with its alert (undefined when the alert was deleted meanwhile). */
interface ClaimedItem extends ClaimedNotification {
  alert: StoredRow<AlertToNotify> | undefined;
}

/** Notifications sent at the same time; one claim holds at most one change of each alert. */
const CONCURRENCY = 4;
const RETRIES: NotificationRetries = { maxAttempts: 6, baseMs: 30_000 };

/**
 * Sends the notifications of alerts' changes, on the queue loop the workers share: each under a
 * lease, finished only while this process still holds it, retried with a back-off.
 */
export class AlertNotifications {
  private readonly loop: QueueLoop<ClaimedItem>;
  private sent = 0;

  constructor(private readonly options: AlertNotificationsOptions) {
    const { db, log, workerId } = options;
    this.loop = new QueueLoop<ClaimedItem>({
      name: 'alert notifier',
      items: 'alert notifications',
      workerId,
      db,
      log,
      concurrency: CONCURRENCY,
      pollIntervalMs: options.pollIntervalMs,
      shutdownGraceMs: options.shutdownGraceMs,
      claim: (limit) => this.claim(limit),
      release: (item) => releaseNotification(db, item.id, workerId),
      work: (item) => this.send(item),
    });
  }

  /** Sends rounds of due notifications until none is due or `stopping()`; says how many went. */
  async sendDue(stopping: () => boolean): Promise<number> {
    const before = this.sent;
    let claimed;
    do claimed = await this.loop.runOnce();
    while (claimed > 0 && !stopping());
    return this.sent - before;
  }

  /** Lets the sends in progress finish, within the shutdown grace. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async claim(limit: number): Promise<ClaimedItem[]> {
    const { db, workerId, leaseMs } = this.options;
    const claimed = await claimNotifications(db, workerId, limit, leaseMs);
    if (claimed.length === 0) return [];
    const alerts = await alertsByIds(db, [...new Set(claimed.map((c) => c.alert_id))]);
    return claimed.map((change) => ({ ...change, alert: alerts.get(change.alert_id) }));
  }

  private async send(change: ClaimedItem): Promise<void> {
    const { db, log, workerId } = this.options;
    const { alert } = change;
    if (!alert) return;
    const sent = await notify(this.options, alert, changeNotification(change)).catch(
      (error: unknown): SendOutcome => {
        // A notify that cannot even be sent (its secret or URL sealed under a key no longer
        // configured, the alert secret unreadable) is a failed attempt like any other: it
        // counts toward the attempts instead of being taken again every lease, for ever, and
        // the other notifications still go.
        log.error({ err: error, alertId: alert.id }, 'alert notification could not be sent');
        const message = error instanceof Error ? error.message : String(error);
        return { outcome: 'retry', status: null, error: message, retryAfterMs: 0, parts: 0 };
      },
    );
    const logged = { alertId: alert.id, state: change.state, attempts: change.attempts };
    if (sent.outcome === 'delivered') {
      if (!(await markSent(db, change.id, workerId))) {
        log.warn(logged, 'alert notification taken over by another process');
        return;
      }
      this.sent += 1;
      log.info({ alertId: alert.id, state: change.state }, 'alert notification sent');
      return;
    }
    const failure = {
      error: describeFailure(sent),
      final: sent.outcome === 'fail',
      notBeforeMs: sent.outcome === 'retry' ? sent.retryAfterMs : 0,
    };
    const state = await retryNotification(db, change.id, workerId, failure, RETRIES);
    if (state === undefined) log.warn(logged, 'alert notification taken over by another process');
    else log.warn({ ...logged, final: state === 'failed' }, 'alert notification not sent');
  }
}

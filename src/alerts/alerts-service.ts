import { changesBetween, recordAudit } from '../audit/record-audit.js';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.js';
import type { SendOutcome } from '../destinations/destination-transport.js';
import { createTransportDeps } from '../destinations/transport-deps.js';
import type { Config } from '../platform/config.js';
import { whyUnreachable } from '../outbound/address-guard.js';
import { invalidField, notFound } from '../platform/errors.js';
import { newSigningSecret } from '../platform/secrets.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { keptUrl } from '../secrets/secret-values.js';
import { toAlertChange, toAlertJson, type AlertChange, type AlertJson } from './alert-object.js';
import {
  keepsSecret,
  missingSecret,
  toStoredNotify,
  type StoredNotify,
} from './notify-destination.js';
import type { AlertCondition, AlertNotify, CreateAlert, UpdateAlert } from './alert-schemas.js';
import { describeFailure, notify, testNotification } from './send-notification.js';
import * as repo from './alerts-repo.js';
import { requireRoom } from '../workspaces/workspace-limits.js';

/** Changes of each alert shown in its history on the panel's Alerts page. */
const HISTORY_PER_ALERT = 10;

/** What a test notification came to: `error` (secrets cut) when the target refused or was not reached. */
export interface AlertTest {
  ok: boolean;
  error?: string;
}

/** Alerts seen from the API and the panel: the rules, their history, the workspace's secret. */
export class AlertsService {
  constructor(
    private readonly db: Database,
    /** Seals the workspaces' alert secrets in the database, and opens them. */
    private readonly secrets: SecretBox,
    registry: Registry,
    /**
     * How notifications are sent (a test's, here): the timeout, the platforms' URLs, and
     * whether notify URLs may reach loopback and private addresses (DELIVERY_ALLOW_PRIVATE).
     */
    private readonly delivery: Config['delivery'],
  ) {
    const db_ = db;
    new Gauge({
      name: 'hookprompt_alerts_firing',
      help: 'Alerts firing now, over every workspace.',
      registers: [registry],
      // Read at scrape time, so every process shows the same number.
      async collect() {
        try {
          this.set(await repo.countFiring(db_));
        } catch {
          this.reset();
        }
      },
    });
  }

  async list(workspaceId: string): Promise<AlertJson[]> {
    return (await repo.listAlerts(this.db, this.secrets, workspaceId)).map(toAlertJson);
  }

  async get(workspaceId: string, id: string): Promise<AlertJson> {
    const row = await repo.findAlert(this.db, this.secrets, workspaceId, id);
    if (!row) throw notFound('This alert');
    return toAlertJson(row);
  }

  async create(workspaceId: string, input: CreateAlert): Promise<AlertJson> {
    await this.requireChannel(workspaceId, input.condition);
    const notify = await this.notifyWrite(input.notify, undefined);
    return this.db.transaction(async (tx) => {
      await requireRoom(tx, workspaceId, 'alerts');
      const alert = toAlertJson(
        await repo.insertAlert(tx, this.secrets, workspaceId, { ...input, ...notify }),
      );
      await recordAudit(tx, {
        workspaceId,
        action: 'alert.create',
        target: { kind: 'alert', id: alert.id },
        // Where it notifies may hold a secret (a webhook URL, a bot token): recorded as changed.
        changes: changesBetween(undefined, alert, Object.keys(input), ['notify']),
      });
      return alert;
    });
  }

  async update(workspaceId: string, id: string, changes: UpdateAlert): Promise<AlertJson> {
    const before = await repo.findAlert(this.db, this.secrets, workspaceId, id);
    if (!before) throw notFound('This alert');
    if (changes.condition) await this.requireChannel(workspaceId, changes.condition);
    const { notify: given, ...rest } = changes;
    const notify = given ? await this.notifyWrite(given, before) : {};
    return this.db.transaction(async (tx) => {
      const row = await repo.updateAlert(tx, this.secrets, workspaceId, id, {
        ...rest,
        ...notify,
      });
      if (!row) throw notFound('This alert');
      const alert = toAlertJson(row);
      const members = Object.keys(changes);
      // Enabling and disabling are their own actions, as the panel's buttons are.
      const action =
        members.length === 1 && changes.enabled !== undefined
          ? changes.enabled
            ? 'alert.enable'
            : 'alert.disable'
          : 'alert.update';
      await recordAudit(tx, {
        workspaceId,
        action,
        target: { kind: 'alert', id },
        changes: changesBetween(toAlertJson(before), alert, members, ['notify']),
      });
      return alert;
    });
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await repo.deleteAlert(tx, workspaceId, id))) throw notFound('This alert');
      await recordAudit(tx, { workspaceId, action: 'alert.delete', target: { kind: 'alert', id } });
    });
  }

  /**
   * Sends one `alert.test` notification to the alert's notify target now, outside the
   * notification queue (nothing recorded), and says whether the target took it.
   */
  async test(workspaceId: string, id: string): Promise<AlertTest> {
    const alert = await repo.findAlertToNotify(this.db, workspaceId, id);
    if (!alert) throw notFound('This alert');
    const transports = createTransportDeps(this.delivery);
    try {
      const deps = { transports, secrets: this.secrets, alertSecret: this.alertSecret };
      const sent = await notify(deps, alert, testNotification(alert, randomUUID())).catch(
        // A notify that cannot even be sent (its secret sealed under a key no longer configured).
        (error: unknown): SendOutcome => ({
          outcome: 'fail',
          status: null,
          error: error instanceof Error ? error.message : String(error),
          parts: 0,
        }),
      );
      return sent.outcome === 'delivered'
        ? { ok: true }
        : { ok: false, error: describeFailure(sent) };
    } finally {
      transports.close();
    }
  }

  /** Each alert's latest changes, newest first, by alert id. */
  async history(workspaceId: string): Promise<Map<string, AlertChange[]>> {
    const byAlert = new Map<string, AlertChange[]>();
    for (const row of await repo.recentChanges(this.db, workspaceId, HISTORY_PER_ALERT)) {
      const change = toAlertChange(row);
      byAlert.set(change.alertId, [...(byAlert.get(change.alertId) ?? []), change]);
    }
    return byAlert;
  }

  /** The workspace's alert secret (`whsec_...`): webhook notifications are signed with it. */
  readonly alertSecret = async (workspaceId: string): Promise<string> => {
    const secret = await repo.ensureAlertSecret(
      this.db,
      this.secrets,
      workspaceId,
      newSigningSecret(),
    );
    if (!secret) throw notFound('This workspace');
    return secret;
  };

  /** A condition naming a channel must name one of the workspace's. */
  private async requireChannel(workspaceId: string, condition: AlertCondition): Promise<void> {
    if (!('channel_id' in condition) || condition.channel_id === undefined) return;
    if (await repo.channelExists(this.db, workspaceId, condition.channel_id)) return;
    throw invalidField('condition.channel_id', 'must be the id of a channel of this workspace');
  }

  /**
   * The notify to store and its secret, sealed. One sent without its secret keeps the stored
   * one when it stays the same kind posting the same way; else it must bring it. A `webhook`
   * URL sent as it was read back keeps the stored URL's password.
   * A URL that leads to this host or its private network (SSRF) is refused unless
   * DELIVERY_ALLOW_PRIVATE is set; checked here, when it is saved, and again at every connection.
   */
  private async notifyWrite(
    notify: AlertNotify,
    before: repo.AlertRow | undefined,
  ): Promise<{ notify: StoredNotify; notifySecret?: string | null }> {
    const { stored, secret } = toStoredNotify(notify);
    if (stored.url && before?.notify.kind === 'webhook')
      stored.url = keptUrl(stored.url, before.notify.url);
    const withSecret = before?.notify_secret_set ? before.notify : undefined;
    for (const [field, url] of [
      ['url', stored.url],
      ['webhook_url', 'webhook_url' in notify ? notify.webhook_url : undefined],
    ] as const) {
      if (!url) continue;
      const refused = await whyUnreachable(new URL(url), {
        allowPrivate: this.delivery.allowPrivate,
        setting: 'DELIVERY_ALLOW_PRIVATE',
      });
      if (refused)
        throw invalidField(
          `notify.${field}`,
          `refused: ${refused} (set DELIVERY_ALLOW_PRIVATE=true to allow it)`,
        );
    }
    if (secret !== undefined) return { notify: stored, notifySecret: this.secrets.seal(secret) };
    if (keepsSecret(stored, withSecret)) return { notify: stored };
    const needed = missingSecret(stored);
    if (needed) throw invalidField(`notify.${needed}`, `is needed for a ${stored.kind} notify`);
    return { notify: stored, notifySecret: null };
  }
}

import type { SendOutcome, SenderDeps } from '../destinations/destination-sender.js';
import { sendToDestination } from '../destinations/send-to-destination.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { SecretCutter } from '../secrets/cut-secrets.js';
import { parsePayload, renderTemplate } from '../template/index.js';
import { DEFAULT_ALERT_MESSAGE, sendingSettings } from './notify-destination.js';
import { toAlertJson } from './alert-object.js';
import { MESSAGE_TYPES, TEST_MESSAGE_TYPE, type AlertState } from './alert-states.js';
import { withNotifyUrl, type AlertToNotify, type StoredRow } from './alerts-repo.js';
import type { ClaimedNotification } from './queue-claim.js';

export interface NotifierDeps {
  /** The destination senders' HTTP clients and platform URLs. */
  senders: SenderDeps;
  /** Opens the notify secrets (and notify URLs sealed for their credentials or query). */
  secrets: SecretBox;
  /** The workspace's alert secret (`whsec_...`), made on first use. */
  alertSecret: (workspaceId: string) => Promise<string>;
}

/** One notification of an alert: a change of its state, or a test. */
export interface AlertNotification {
  /** The message id: the same on every attempt of one change. */
  id: string;
  /** `alert.firing`, `alert.resolved` or `alert.test`. */
  type: string;
  state: AlertState;
  value: number | null;
  at: Date;
  /** A test sent on request (`"test": true` in the webhook's data; chat messages say so). */
  test?: boolean;
}

/** The notification of a recorded change. */
export const changeNotification = (change: ClaimedNotification): AlertNotification => ({
  id: `msg_alert_${change.id}`,
  type: MESSAGE_TYPES[change.state],
  state: change.state,
  value: change.value,
  at: change.changed_at,
});

/** A test notification of the alert as it is now. */
export const testNotification = (alert: AlertToNotify, id: string): AlertNotification => ({
  id: `msg_alert_test_${id}`,
  type: TEST_MESSAGE_TYPE,
  state: alert.state,
  value: alert.last_value,
  at: new Date(),
  test: true,
});

/**
 * Sends one notification of an alert to its `notify` destination through that kind's sender,
 * once (the notification queue retries changes). Chat kinds get the notify's `message` rendered
 * with `{alert, state, value, workspace}`; a `webhook` gets the Standard Webhooks message `{type,
 * timestamp, data: {alert, value}}` signed with the workspace's alert secret. The outcome's
 * error and answer come with the notify's secrets cut out.
 */
export async function notify(
  deps: NotifierDeps,
  stored: StoredRow<AlertToNotify>,
  notification: AlertNotification,
): Promise<SendOutcome> {
  const alert = withNotifyUrl(deps.secrets, stored);
  const { state, value, test } = notification;
  const shown = { ...toAlertJson(alert), state, last_value: value };
  const view = parsePayload(
    JSON.stringify({
      alert: shown,
      state,
      value,
      workspace: { id: alert.workspace_id, name: alert.workspace_name },
    }),
  );
  const webhook = alert.notify.kind === 'webhook';
  const secret = deps.secrets.open(alert.notify_secret);
  const text = renderTemplate(alert.notify.message ?? DEFAULT_ALERT_MESSAGE, view);
  const outcome = await sendToDestination(
    deps.senders,
    sendingSettings(alert.notify, secret),
    {
      id: notification.id,
      text: test ? `[test] ${text}` : text,
      webhookBody: webhook
        ? JSON.stringify({
            type: notification.type,
            timestamp: notification.at.toISOString(),
            data: { alert: shown, value, ...(test ? { test: true } : {}) },
          })
        : undefined,
      signingSecrets: webhook ? [await deps.alertSecret(alert.workspace_id)] : undefined,
    },
    { payload: view },
  );
  if (outcome.outcome === 'delivered') return outcome;
  const cutter = new SecretCutter({ values: [secret], urls: [alert.notify.url] });
  const answer = outcome.answer === undefined ? {} : { answer: cutter.cut(outcome.answer) };
  return { ...outcome, error: cutter.cut(outcome.error), ...answer };
}

/** A failed notification in words, as the Alerts page and the test show it. */
export function describeFailure(sent: Exclude<SendOutcome, { outcome: 'delivered' }>): string {
  return sent.status === null ? sent.error : `${sent.error} (HTTP ${sent.status})`;
}

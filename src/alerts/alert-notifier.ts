import type { SendOutcome, SenderDeps } from '../destinations/destination-sender.js';
import { sendToDestination } from '../destinations/send-to-destination.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { parsePayload, renderTemplate } from '../template/index.js';
import { DEFAULT_ALERT_MESSAGE, sendingSettings } from './alert-notify.js';
import { toAlertJson } from './alert-object.js';
import { MESSAGE_TYPES } from './alert-states.js';
import { withNotifyUrl, type AlertToNotify, type StoredRow } from './alerts-repo.js';
import type { ClaimedNotification } from './notification-queue.js';

export interface NotifierDeps {
  /** The destination senders' HTTP clients and platform URLs. */
  senders: SenderDeps;
  /** Opens the notify secrets (and notify URLs sealed for their credentials or query). */
  secrets: SecretBox;
  /** The workspace's alert secret (`whsec_...`), made on first use. */
  alertSecret: (workspaceId: string) => Promise<string>;
}

/**
 * Sends one change of an alert to its `notify` destination through that kind's sender, once
 * (the notification queue retries). Chat kinds get the notify's `message` rendered with
 * `{alert, state, value, workspace}`; a `webhook` gets the Standard Webhooks message `{type,
 * timestamp, data: {alert, value}}` signed with the workspace's alert secret. The message id is
 * the change's, the same on every attempt.
 */
export async function notify(
  deps: NotifierDeps,
  stored: StoredRow<AlertToNotify>,
  change: ClaimedNotification,
): Promise<SendOutcome> {
  const alert = withNotifyUrl(deps.secrets, stored);
  const shown = { ...toAlertJson(alert), state: change.state, last_value: change.value };
  const view = parsePayload(
    JSON.stringify({
      alert: shown,
      state: change.state,
      value: change.value,
      workspace: { id: alert.workspace_id, name: alert.workspace_name },
    }),
  );
  const webhook = alert.notify.kind === 'webhook';
  return sendToDestination(
    deps.senders,
    sendingSettings(alert.notify, deps.secrets.open(alert.notify_secret)),
    {
      id: `msg_alert_${change.id}`,
      text: renderTemplate(alert.notify.message ?? DEFAULT_ALERT_MESSAGE, view),
      webhookBody: webhook
        ? JSON.stringify({
            type: MESSAGE_TYPES[change.state],
            timestamp: change.changed_at.toISOString(),
            data: { alert: shown, value: change.value },
          })
        : undefined,
      signingSecrets: webhook ? [await deps.alertSecret(alert.workspace_id)] : undefined,
    },
    { payload: view },
  );
}

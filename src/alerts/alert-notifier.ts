import type { Logger } from '../platform/logger.js';
import { messageHeaders } from '../deliveries/delivery-message.js';
import { OutboundError, type OutboundClient } from '../outbound/outbound-client.js';
import { toAlertJson } from './alert-object.js';
import { MESSAGE_TYPES } from './alert-states.js';
import type { AlertRow } from './alerts-repo.js';
import type { ClaimedNotification } from './notification-queue.js';

/** What became of one attempt: sent, worth another later, or failed for good. */
export type NotifyOutcome = { sent: true } | { sent: false; error: string; retryable: boolean };

export interface NotifierDeps {
  client: OutboundClient;
  /** The workspace's alert secret (`whsec_...`), made on first use. */
  alertSecret: (workspaceId: string) => Promise<string>;
  log: Logger;
}

/**
 * Sends one change of an alert through its `notify` destination. Kept to one function so each
 * destination kind plugs in here.
 */
export async function notify(
  deps: NotifierDeps,
  alert: AlertRow,
  change: ClaimedNotification,
): Promise<NotifyOutcome> {
  switch (alert.notify.kind) {
    case 'webhook':
      return sendWebhook(deps, alert, change);
  }
}

/**
 * A Standard Webhooks message `{type, timestamp, data: {alert, value}}`, signed with the
 * workspace's alert secret; its webhook-id is the change's, the same on every attempt.
 */
async function sendWebhook(
  deps: NotifierDeps,
  alert: AlertRow,
  change: ClaimedNotification,
): Promise<NotifyOutcome> {
  const body = JSON.stringify({
    type: MESSAGE_TYPES[change.state],
    timestamp: change.changed_at.toISOString(),
    data: { alert: toAlertJson(alert), value: change.value },
  });
  const secret = await deps.alertSecret(alert.workspace_id);
  const headers = messageHeaders(`msg_alert_${change.id}`, body, [secret], new Date());
  try {
    const res = await deps.client.post(alert.notify.url, body, headers);
    if (res.status >= 200 && res.status < 300) return { sent: true };
    return { sent: false, error: `The receiver answered ${res.status}.`, retryable: true };
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { sent: false, error: error.message, retryable: error.retryable };
  }
}

/**
 * An alert's life, in one place: `ok` ⇄ `firing`, each change recorded in alert_changes with the
 * notification it sends (`pending` until sent, then `sent`, or `failed` after the last attempt).
 * The CHECK constraints of migrations/0027 hold the same lists.
 */
export const ALERT_STATES = ['ok', 'firing'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

export const NOTIFICATION_STATES = ['pending', 'sent', 'failed'] as const;
export type NotificationState = (typeof NOTIFICATION_STATES)[number];

/** The Standard Webhooks message type of each change. */
export const MESSAGE_TYPES: Readonly<Record<AlertState, string>> = {
  firing: 'alert.firing',
  ok: 'alert.resolved',
};

/** The Standard Webhooks message type of a test sent on request (`POST /alerts/{id}/test`). */
export const TEST_MESSAGE_TYPE = 'alert.test';

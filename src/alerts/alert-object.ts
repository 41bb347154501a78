import { shownNotify } from './notify-destination.js';
import type { AlertChangeRow, AlertRow } from './alerts-repo.js';

export interface AlertJson {
  id: string;
  name: string;
  condition: AlertRow['condition'];
  notify: Record<string, unknown>;
  enabled: boolean;
  for_s: number;
  state: AlertRow['state'];
  since: string | null;
  last_value: number | null;
}

/** An alert as the API shows it. */
export function toAlertJson(row: AlertRow): AlertJson {
  return {
    id: row.id,
    name: row.name,
    condition: row.condition,
    notify: shownNotify(row.notify, row.notify_secret_set),
    enabled: row.enabled,
    for_s: row.for_s,
    state: row.state,
    since: row.since ? row.since.toISOString() : null,
    last_value: row.last_value,
  };
}

/** One change of an alert's state, for its history on the panel's Alerts page. */
export interface AlertChange {
  id: string;
  alertId: string;
  state: AlertChangeRow['state'];
  value: number | null;
  changedAt: Date;
  notification: AlertChangeRow['notification'];
  attempts: number;
  lastError: string | null;
}

export function toAlertChange(row: AlertChangeRow): AlertChange {
  return {
    id: row.id,
    alertId: row.alert_id,
    state: row.state,
    value: row.value,
    changedAt: row.changed_at,
    notification: row.notification,
    attempts: row.attempts,
    lastError: row.last_error,
  };
}

import type { AlertJson } from '../../alerts/alert-object.js';
import type { AlertCondition } from '../../alerts/alert-schemas.js';
import { DESTINATION_KINDS, type DestinationKind } from '../../destinations/destination-schemas.js';
import { AppError, fieldErrorsOf } from '../../platform/errors.js';
import { KIND_FIELDS, isSecretField } from '../channels/destination-form.js';
import { textareaText, type FieldErrors } from '../forms.js';

type ConditionType = AlertCondition['type'];

/** The number fields each condition's fieldset shows, as the API names them. */
export const CONDITION_FIELDS: Readonly<Record<ConditionType, readonly string[]>> = {
  failure_rate: ['threshold', 'window_s', 'min_events'],
  rejections: ['count', 'window_s'],
  delivery_failed: ['after_attempts'],
  queue_age: ['seconds'],
  budget: ['percent'],
  approval_waiting: [],
};
export const CONDITION_TYPES = Object.keys(CONDITION_FIELDS) as ConditionType[];

/** Each condition as the form names it. */
export const CONDITION_LABELS: Readonly<Record<ConditionType, string>> = {
  failure_rate: 'Too many events failed',
  rejections: 'Too many requests refused',
  delivery_failed: 'A delivery failed',
  queue_age: 'Events wait too long',
  budget: 'Budget spent',
  approval_waiting: 'A tool call waits for approval',
};

/** Each field of the form in words, by its HTML id without `alert-`. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  name: 'Name',
  type: 'When',
  channel_id: 'Channel',
  for_s: 'Hold for (seconds, 0–3,600)',
  failure_rate_threshold: 'Failed share at least (0–1: 0.25 is a quarter)',
  failure_rate_window_s: 'Over the last (seconds)',
  failure_rate_min_events: 'Only with at least this many events',
  rejections_count: 'Refused requests at least',
  rejections_window_s: 'Over the last (seconds)',
  delivery_failed_after_attempts:
    'After this many failed attempts (1–20; empty: once its retries have ended)',
  queue_age_seconds: 'The oldest waiting event older than (seconds)',
  budget_percent: 'Share of the monthly budget spent (%)',
  notify_kind: 'Tell',
  notify_webhook_url: 'URL (signed with the alert secret)',
  notify_slack_webhook_url: 'Incoming Webhook URL',
  notify_slack_token: 'Bot token (instead of a webhook)',
  notify_slack_channel: 'Channel (with a bot token)',
  notify_slack_thread_ts: 'Thread (its first message’s timestamp)',
  notify_telegram_bot_token: 'Bot token',
  notify_telegram_chat_id: 'Chat id',
  notify_telegram_reply_to: 'In reply to message id',
  notify_discord_webhook_url: 'Webhook URL',
  notify_discord_thread_id: 'Thread id',
  notify_teams_webhook_url: 'Workflow URL',
  message: 'Message (chats; empty: the default)',
};

/** Where an alert can tell, as the form names each. */
export const NOTIFY_LABELS: Readonly<Record<DestinationKind, string>> = {
  webhook: 'A webhook (signed)',
  slack: 'Slack',
  telegram: 'Telegram',
  discord: 'Discord',
  teams: 'Microsoft Teams',
};
/** The conditions that may watch one channel. */
export const CHANNEL_TYPES: readonly ConditionType[] = [
  'failure_rate',
  'rejections',
  'delivery_failed',
  'approval_waiting',
];

/**
 * The "Add an alert" form as the page shows it: every field as text. Fields are named
 * `<type>_<field>` and `notify_<kind>_<field>`, so that every fieldset is in one form (shown
 * together without JavaScript).
 */
export interface AlertForm {
  name: string;
  type: ConditionType;
  channelId: string;
  kind: DestinationKind;
  message: string;
  /** Seconds the condition must hold before the alert turns; empty is 0. */
  forS: string;
  fields: Record<string, string>;
}

export const emptyAlertForm = (): AlertForm => ({
  name: '',
  type: 'delivery_failed',
  channelId: '',
  kind: 'webhook',
  message: '',
  forS: '0',
  fields: {},
});

/** The form a stored alert is edited in; its notify's secret is never sent back to the page. */
export function formOfAlert(alert: AlertJson): AlertForm {
  const { condition, notify } = alert;
  const kind = notify.kind as DestinationKind;
  const fields: Record<string, string> = {};
  for (const [field, value] of Object.entries(condition))
    if (field !== 'type' && field !== 'channel_id')
      fields[`${condition.type}_${field}`] = String(value);
  for (const field of KIND_FIELDS[kind]) {
    const value = notify[field];
    if (!isSecretField(kind, field) && typeof value === 'string')
      fields[`notify_${kind}_${field}`] = value;
  }
  return {
    name: alert.name,
    type: condition.type,
    channelId: ('channel_id' in condition && condition.channel_id) || '',
    kind,
    message: typeof notify.message === 'string' ? notify.message : '',
    forS: String(alert.for_s),
    fields,
  };
}

export function postedAlertForm(body: unknown): AlertForm {
  const posted = (body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof posted[name] === 'string' ? posted[name].trim() : '');
  const type = (CONDITION_TYPES as string[]).includes(text('type'))
    ? (text('type') as ConditionType)
    : 'delivery_failed';
  const kind = (DESTINATION_KINDS as readonly string[]).includes(text('notify_kind'))
    ? (text('notify_kind') as DestinationKind)
    : 'webhook';
  const fields: Record<string, string> = {};
  for (const field of CONDITION_FIELDS[type]) fields[`${type}_${field}`] = text(`${type}_${field}`);
  for (const field of KIND_FIELDS[kind])
    fields[`notify_${kind}_${field}`] = text(`notify_${kind}_${field}`);
  return {
    name: text('name'),
    type,
    channelId: text('channel_id'),
    kind,
    message: textareaText(text('message')),
    forS: text('for_s'),
    fields,
  };
}

/** A number typed, or the text as typed when it is not one (so that the schema names the field). */
const numberOf = (value: string): unknown => (Number.isNaN(Number(value)) ? value : Number(value));

/** What the API would take for this form; fields left empty are left out (`for_s` empty is 0). */
export function alertInputOf(form: AlertForm): Record<string, unknown> {
  const condition: Record<string, unknown> = { type: form.type };
  if (form.channelId && CHANNEL_TYPES.includes(form.type)) condition.channel_id = form.channelId;
  for (const field of CONDITION_FIELDS[form.type]) {
    const value = form.fields[`${form.type}_${field}`];
    if (value) condition[field] = numberOf(value);
  }
  const notify: Record<string, unknown> = { kind: form.kind };
  for (const field of KIND_FIELDS[form.kind]) {
    const value = form.fields[`notify_${form.kind}_${field}`];
    if (value) notify[field] = value;
  }
  if (form.message) notify.message = form.message;
  return { name: form.name, condition, notify, for_s: form.forS ? numberOf(form.forS) : 0 };
}

/** The HTML id of a field of the form, by its API path (`condition.window_s`, `notify.url`). */
function fieldOf(form: AlertForm, path: string): string {
  const [head, member] = path.split('.');
  if (head === 'name') return 'alert-name';
  if (head === 'for_s') return 'alert-for_s';
  if (head === 'condition' && member === 'channel_id') return 'alert-channel_id';
  if (head === 'condition' && member && CONDITION_FIELDS[form.type].includes(member))
    return `alert-${form.type}_${member}`;
  if (head === 'notify' && member && KIND_FIELDS[form.kind].includes(member))
    return `alert-notify_${form.kind}_${member}`;
  if (head === 'notify' && member === 'message') return 'alert-message';
  return 'form';
}

/**
 * The errors of the API's checks (zod's, the service's `validation_failed`, `limit_reached`) at
 * the form's fields; anything else is thrown again.
 */
export function alertFormErrors(error: unknown, form: AlertForm): FieldErrors {
  const found =
    fieldErrorsOf(error) ??
    (error instanceof AppError && error.status === 409
      ? [{ path: '', message: error.detail }]
      : undefined);
  if (!found) throw error;
  const errors: FieldErrors = {};
  for (const { path, message } of found) {
    const field = fieldOf(form, path);
    errors[field] ??= field === 'form' && path ? `${path}: ${message}` : message;
  }
  return errors;
}

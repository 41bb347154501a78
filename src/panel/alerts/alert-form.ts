import type { AlertCondition } from '../../alerts/alert-schemas.js';
import { DESTINATION_KINDS, type DestinationKind } from '../../destinations/destination-schemas.js';
import { AppError, fieldErrorsOf } from '../../platform/errors.js';
import { KIND_FIELDS } from '../channels/destination-form.js';
import type { FieldErrors } from '../forms.js';

type ConditionType = AlertCondition['type'];

/** The number fields each condition's fieldset shows, as the API names them. */
export const CONDITION_FIELDS: Readonly<Record<ConditionType, readonly string[]>> = {
  failure_rate: ['threshold', 'window_s', 'min_events'],
  rejections: ['count', 'window_s'],
  delivery_failed: ['after_attempts'],
  queue_age: ['seconds'],
  budget: ['percent'],
};
export const CONDITION_TYPES = Object.keys(CONDITION_FIELDS) as ConditionType[];
/** The conditions that may watch one channel. */
export const CHANNEL_TYPES: readonly ConditionType[] = [
  'failure_rate',
  'rejections',
  'delivery_failed',
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
  fields: Record<string, string>;
}

export const emptyAlertForm = (): AlertForm => ({
  name: '',
  type: 'delivery_failed',
  channelId: '',
  kind: 'webhook',
  message: '',
  fields: {},
});

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
    message: text('message'),
    fields,
  };
}

/** What the API would take for this form; fields left empty are left out. */
export function alertInputOf(form: AlertForm): Record<string, unknown> {
  const condition: Record<string, unknown> = { type: form.type };
  if (form.channelId && CHANNEL_TYPES.includes(form.type)) condition.channel_id = form.channelId;
  for (const field of CONDITION_FIELDS[form.type]) {
    const value = form.fields[`${form.type}_${field}`];
    // Not a number: given as typed, so the schema names the field.
    if (value) condition[field] = Number.isNaN(Number(value)) ? value : Number(value);
  }
  const notify: Record<string, unknown> = { kind: form.kind };
  for (const field of KIND_FIELDS[form.kind]) {
    const value = form.fields[`notify_${form.kind}_${field}`];
    if (value) notify[field] = value;
  }
  if (form.message) notify.message = form.message;
  return { name: form.name, condition, notify };
}

/** The HTML id of a field of the form, by its API path (`condition.window_s`, `notify.url`). */
function fieldOf(form: AlertForm, path: string): string {
  const [head, member] = path.split('.');
  if (head === 'name') return 'alert-name';
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

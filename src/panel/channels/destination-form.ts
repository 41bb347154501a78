import { ZodError } from 'zod';
import { describeCondition } from '../../conditions/conditions.js';
import {
  DEFAULT_MESSAGE,
  DEFAULT_WHEN,
  DESTINATION_KINDS,
  whenSchema,
  type DestinationKind,
} from '../../destinations/destination-schemas.js';
import type { DestinationJson } from '../../destinations/destinations-service.js';
import { AppError } from '../../platform/errors.js';
import { parseAcceptWhenText } from './accept-when-form.js';
import type { FieldErrors } from '../forms.js';
import { textareaText } from '../forms.js';

/**
 * The fields each kind's fieldset shows, as the API names them. The page names them
 * `<kind>_<field>` so that all fieldsets can be in one form (shown together without JavaScript).
 */
export const KIND_FIELDS: Readonly<Record<DestinationKind, readonly string[]>> = {
  webhook: ['url'],
  slack: ['webhook_url', 'token', 'channel', 'thread_ts'],
  telegram: ['bot_token', 'chat_id', 'reply_to'],
  discord: ['webhook_url', 'thread_id'],
  teams: ['webhook_url'],
};

/** Each field in words, as its label reads; the API's member name stays the input's name. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  url: 'URL',
  webhook_url: 'Webhook URL',
  token: 'Bot token',
  channel: 'Channel',
  thread_ts: 'Reply in the thread of message (timestamp)',
  bot_token: 'Bot token',
  chat_id: 'Chat ID',
  reply_to: 'Reply to message ID',
  thread_id: 'Thread ID',
};

/** Write-only fields: shown empty; left empty, the stored secret is kept. */
export const isSecretField = (kind: DestinationKind, field: string) =>
  field === 'token' || field === 'bot_token' || (field === 'webhook_url' && kind !== 'webhook');

/** One destination's form as the page shows it: every field as text. */
export interface DestinationForm {
  /** `new`, or the id of the destination edited. */
  key: string;
  kind: DestinationKind;
  enabled: boolean;
  message: string;
  when: string;
  /** `<kind>_<field>` → text; secrets always empty. */
  fields: Record<string, string>;
}

export function destinationFormOf(destination?: DestinationJson): DestinationForm {
  const fields: Record<string, string> = {};
  if (destination)
    for (const field of KIND_FIELDS[destination.kind]) {
      const value = destination[field];
      if (!isSecretField(destination.kind, field) && typeof value === 'string')
        fields[`${destination.kind}_${field}`] = value;
    }
  return {
    key: destination?.id ?? 'new',
    kind: destination?.kind ?? 'slack',
    enabled: destination?.enabled ?? true,
    message: destination?.message ?? DEFAULT_MESSAGE,
    when: (destination?.when ?? DEFAULT_WHEN).map(describeCondition).join('\n'),
    fields,
  };
}

/** The form as posted. */
export function postedDestinationForm(body: unknown, key: string): DestinationForm {
  const posted = (body ?? {}) as Record<string, unknown>;
  const text = (name: string) =>
    typeof posted[name] === 'string' ? textareaText(posted[name]) : '';
  const kind = (DESTINATION_KINDS as readonly string[]).includes(text('kind'))
    ? (text('kind') as DestinationKind)
    : 'webhook';
  const fields: Record<string, string> = {};
  for (const field of KIND_FIELDS[kind]) fields[`${kind}_${field}`] = text(`${kind}_${field}`);
  return {
    key,
    kind,
    enabled: posted.enabled !== undefined,
    message: text('message'),
    when: text('when'),
    fields,
  };
}

/**
 * The entry the API would take for this form (empty fields left out, so an empty secret keeps
 * the stored one), or the error of its `when` field.
 */
export function destinationInputOf(
  form: DestinationForm,
): { input: Record<string, unknown> } | { errors: FieldErrors } {
  const when = parseAcceptWhenText(form.when, whenSchema);
  if (when.error) return { errors: { [fieldId(form.key, 'when')]: when.error } };
  const input: Record<string, unknown> = {
    kind: form.kind,
    enabled: form.enabled,
    message: form.message,
    when: when.conditions,
  };
  if (form.key !== 'new') input.id = form.key;
  for (const field of KIND_FIELDS[form.kind]) {
    const value = form.fields[`${form.kind}_${field}`]?.trim();
    if (value) input[field] = value;
  }
  return { input };
}

/** The channel's destinations as the API would take them back: ids kept, secrets left out. */
export function storedInputs(destinations: readonly DestinationJson[]): Record<string, unknown>[] {
  return destinations.map((destination) => {
    const input: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(destination))
      if (value !== null && name !== 'token_set' && name !== 'url_set') input[name] = value;
    return input;
  });
}

/** The HTML id of a form's field: `dest-new-slack_channel`, `dest-12-when`. */
export const fieldId = (key: string, field: string) => `dest-${key}-${field}`;

/**
 * The errors of the API's checks (zod's, or the service's `destinations.<i>.<field>`) for the
 * entry at `index`, at the form's fields.
 */
export function destinationErrors(
  error: unknown,
  form: DestinationForm,
  index: number,
): FieldErrors {
  const found: [string, string][] = [];
  if (error instanceof ZodError)
    for (const issue of error.issues) found.push([issue.path.join('.'), issue.message]);
  else if (error instanceof AppError && error.status === 400) {
    const listed = (error.extra.errors ?? []) as { path: string; message: string }[];
    for (const { path, message } of listed) found.push([path, message]);
    if (listed.length === 0) found.push(['', error.detail]);
  } else throw error;
  const errors: FieldErrors = {};
  const prefix = `destinations.${index}`;
  for (const [path, message] of found) {
    const field = path.startsWith(`${prefix}.`) ? path.slice(prefix.length + 1).split('.')[0] : '';
    const name =
      field && KIND_FIELDS[form.kind].includes(field) ? `${form.kind}_${field}` : field || 'kind';
    errors[fieldId(form.key, name)] ??= path.startsWith(prefix) ? message : `${path}: ${message}`;
  }
  return errors;
}

import {
  FIELD_NAMES,
  hasSecret,
  secretOf,
  settingsOf,
  type DestinationKind,
  type DestinationSettings,
} from '../destinations/destination-schemas.js';
import { shownUrl } from '../secrets/secret-values.js';
import type { AlertNotify } from './alert-schemas.js';

/**
 * An alert's destination as stored: everything but its secret, which is sealed on its own, and
 * its URL, stored apart (sealed when it holds credentials or a query string: alerts-repo.ts).
 */
export interface StoredNotify {
  kind: DestinationKind;
  /** The webhook kind's URL, shown without its password. */
  url?: string;
  message?: string;
  /** Slack's `channel` and `thread_ts`, Telegram's `chat_id` and `reply_to`, Discord's `thread_id`. */
  fields: Record<string, string>;
}

/** The message chat destinations get when the alert names none. */
export const DEFAULT_ALERT_MESSAGE =
  'hookprompt alert "{{alert.name}}" is {{state}} (value: {{value}})';

/** What is stored of a notify as sent, and its secret (undefined when it carries none). */
export function toStoredNotify(notify: AlertNotify): { stored: StoredNotify; secret?: string } {
  const settings = settingsOf(notify);
  const stored: StoredNotify = { kind: notify.kind, fields: { ...settings.fields } };
  if (settings.url) stored.url = settings.url;
  if (notify.message !== undefined) stored.message = notify.message;
  return { stored, secret: secretOf(notify) };
}

/** Slack posts with a bot token when it has a `channel`, else to an Incoming Webhook. */
const secretName = (notify: { kind: DestinationKind; fields?: Record<string, string> }) => {
  if (notify.kind === 'telegram') return 'bot_token';
  if (notify.kind === 'slack' && notify.fields?.channel) return 'token';
  return 'webhook_url';
};

/**
 * Whether a notify sent without its secret may keep the one stored: the same kind, posting the
 * same way (Slack: token or Incoming Webhook).
 */
export function keepsSecret(next: StoredNotify, before: StoredNotify | undefined): boolean {
  if (!before || !hasSecret(next.kind) || before.kind !== next.kind) return false;
  return secretName(next) === secretName(before);
}

/** The name of the secret this notify must bring: `bot_token`, `token` or `webhook_url`. */
export function missingSecret(notify: StoredNotify): string | undefined {
  return hasSecret(notify.kind) ? secretName(notify) : undefined;
}

/** A notify as the API shows it: its secret only as `token_set` / `url_set`. */
export function shownNotify(stored: StoredNotify, secretSet: boolean): Record<string, unknown> {
  const shown: Record<string, unknown> = { kind: stored.kind };
  if (stored.kind === 'webhook') shown.url = stored.url && shownUrl(stored.url);
  else if (secretName(stored) === 'webhook_url') shown.url_set = secretSet;
  else shown.token_set = secretSet;
  for (const name of FIELD_NAMES[stored.kind]) shown[name] = stored.fields[name] ?? null;
  shown.message = stored.message ?? DEFAULT_ALERT_MESSAGE;
  return shown;
}

/** The settings the destination's sender takes, with the secret opened. */
export function sendingSettings(stored: StoredNotify, secret: string | null): DestinationSettings {
  return { kind: stored.kind, url: stored.url ?? null, secret, fields: stored.fields };
}

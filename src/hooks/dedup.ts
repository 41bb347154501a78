import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { renderTemplate, type JsonValue } from '../template/index.js';
import type { DedupSettings } from '../channels/sender-settings.js';
import { headerValue } from './request-headers.js';

/** The delivery ids of the senders users connect most, in the order `auto` looks for them. */
export const AUTO_DEDUP_HEADERS = [
  'webhook-id',
  'svix-id',
  'idempotency-key',
  'x-github-delivery',
  'x-shopify-webhook-id',
];

/** Longer keys are stored as their SHA-256, so every key fits the database's unique index. */
const MAX_KEY_LENGTH = 200;

/**
 * The key that makes a request a duplicate of an earlier one, or undefined when it has none
 * (then it is never a duplicate). `payload` is parsed only in `payload` mode.
 */
export function dedupKey(
  settings: DedupSettings,
  headers: IncomingHttpHeaders,
  payload: () => JsonValue,
): string | undefined {
  let key: string | undefined;
  switch (settings.mode) {
    case 'off':
      return undefined;
    case 'auto':
      for (const name of AUTO_DEDUP_HEADERS) {
        key = headerValue(headers, name);
        if (key) break;
      }
      break;
    case 'header':
      key = headerValue(headers, (settings.field ?? '').toLowerCase());
      break;
    case 'payload':
      key = renderTemplate(`{{${settings.field ?? ''}}}`, payload());
      break;
  }
  if (!key) return undefined;
  return key.length > MAX_KEY_LENGTH
    ? `sha256:${createHash('sha256').update(key).digest('hex')}`
    : key;
}

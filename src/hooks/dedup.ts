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
 * (then it is never a duplicate). `payload` is parsed only in `payload` mode. A key from a header
 * is named by its header: the same value in two headers is two keys.
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
        key = namedKey(name, headers);
        if (key) break;
      }
      break;
    case 'header':
      key = namedKey((settings.field ?? '').toLowerCase(), headers);
      break;
    case 'payload':
      key = renderTemplate(`{{${settings.field ?? ''}}}`, payload());
      break;
  }
  if (!key) return undefined;
  return key.length > MAX_KEY_LENGTH ? `sha256:${sha256Hex(key)}` : key;
}

function namedKey(name: string, headers: IncomingHttpHeaders): string | undefined {
  const value = headerValue(headers, name);
  return value === undefined ? undefined : `${name}:${value}`;
}

/**
 * What a key from a header was sent with, kept with the key: a sender that uses a delivery id or
 * an idempotency key again for another body is told so (422) rather than answered as a duplicate.
 * Undefined in `payload` mode, where the key is part of the body and other fields may differ.
 */
export function keyedBodyHash(settings: DedupSettings, body: Buffer): string | undefined {
  return settings.mode === 'auto' || settings.mode === 'header' ? sha256Hex(body) : undefined;
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

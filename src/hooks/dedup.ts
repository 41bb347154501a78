import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { renderTemplate, type JsonValue } from '../template/index.js';
import { headerValue } from './request-headers.js';

export const DEDUP_MODES = ['auto', 'header', 'payload', 'off'] as const;
export type DedupMode = (typeof DEDUP_MODES)[number];

/** A channel's duplicate detection (channel field `dedup`). */
export interface DedupSettings {
  mode: DedupMode;
  /** The header (`header` mode) or payload path (`payload` mode) that holds the key. */
  field?: string;
  /** How long a key is remembered, in seconds. */
  window_s: number;
}

export const DEFAULT_DEDUP: DedupSettings = { mode: 'auto', window_s: 86_400 };
export const MAX_DEDUP_WINDOW_S = 2_592_000;

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
      key = AUTO_DEDUP_HEADERS.map((name) => headerValue(headers, name)).find(Boolean);
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

import { sha256Hex } from '../platform/secrets.js';
import { renderTemplate, type JsonValue } from '../template/index.js';

/** Longer keys are stored as their digest: the key is indexed, and index entries are bounded. */
const MAX_KEY_LENGTH = 200;

/**
 * An event's thread: its channel's `thread_key` template rendered with the payload when the
 * event arrives. A key that renders empty (or only white space) puts the event in no thread.
 * U+0000, which PostgreSQL text cannot hold, becomes U+FFFD as in prompts.
 */
export function renderThreadKey(template: string | null, payload: JsonValue): string | null {
  if (!template) return null;
  const key = renderTemplate(template, payload).replaceAll('\u0000', '\uFFFD');
  if (key.trim() === '') return null;
  if (key.length <= MAX_KEY_LENGTH) return key;
  return `sha256:${sha256Hex(key)}`;
}

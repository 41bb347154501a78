import { createHash, type Hash } from 'node:crypto';

/**
 * The SHA-256 of a request as its model would get it, as 64 hex digits: every member of the
 * object, whatever it is (texts, numbers, lists, nested objects, bytes such as images), so a
 * member the request gains is part of the comparison without a change here. Members are read in
 * the order of their names and undefined ones are left out, so two requests that would be sent
 * alike hash alike however they were built. `same` rewrites each text first (see requestHash's
 * caller: the spotlight's per-event tag).
 */
export function requestHash(request: unknown, same: (text: string) => string = (t) => t): string {
  const hash = createHash('sha256');
  feed(hash, request, same);
  return hash.digest('hex');
}

function feed(hash: Hash, value: unknown, same: (text: string) => string): void {
  if (value === null || value === undefined) {
    hash.update('n');
  } else if (typeof value === 'string') {
    // Length first: no two sequences of texts feed the same bytes.
    const text = same(value);
    hash.update(`s${Buffer.byteLength(text)}:`);
    updateText(hash, text);
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    hash.update(`v${JSON.stringify(value)};`);
  } else if (value instanceof Uint8Array) {
    hash.update(`b${value.byteLength}:`).update(value);
  } else if (Array.isArray(value)) {
    hash.update(`[${value.length}:`);
    for (const item of value) feed(hash, item, same);
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    hash.update(`{${entries.length}:`);
    for (const [name, member] of entries) {
      feed(hash, name, (t) => t);
      feed(hash, member, same);
    }
  } else {
    throw new TypeError(`A request cannot hold a ${typeof value}`);
  }
}

/** A text is read in slices: a long one (an image's base64) is not copied whole to be hashed. */
const SLICE = 64 * 1024;

function updateText(hash: Hash, text: string): void {
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + SLICE);
    // A pair of surrogates stays in one slice: its UTF-8 is that of the whole text.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    hash.update(text.slice(at, end));
    at = end;
  }
}

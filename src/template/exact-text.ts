import type { JsonArray, JsonObject } from './json-value.js';

/**
 * Large objects and arrays of parsed payloads whose text, as received, is exactly what rendering
 * them writes (compact JSON: no white space, no escape, no repeated key). Rendering one is then
 * a slice of the received text, which costs nothing whatever its size, instead of a walk of its
 * tree: `accept_when`'s `contains` on a large object, `{{.}}` of a large payload. Parsed trees
 * are never changed, so the text stays true; it goes with its tree.
 */
const exactTexts = new WeakMap<JsonObject | JsonArray, string>();

/** Smaller containers are rendered as fast as they are looked up: not worth remembering. */
export const EXACT_TEXT_MIN_LENGTH = 4096;

// A lone surrogate is written as an escape when rendered: its raw text is not the rendering.
const LONE_SURROGATE = /\p{Cs}/u;

/** Remembers `text` (a slice of the parsed text) as the rendering of `container`. */
export function keepExactText(container: JsonObject | JsonArray, text: string): void {
  if (!LONE_SURROGATE.test(text)) exactTexts.set(container, text);
}

/** The rendering of a container kept when it was parsed, if any. */
export function exactTextOf(container: JsonObject | JsonArray): string | undefined {
  return exactTexts.get(container);
}

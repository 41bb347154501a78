/**
 * The value model of a webhook payload.
 *
 * Objects are Maps rather than plain objects for two reasons: a Map keeps the
 * keys in document order even when they look like integers (a plain object
 * would move "2" before "a"), and a Map has no prototype chain, so keys such
 * as `__proto__` or `constructor` are ordinary data and lookups only ever see
 * the payload's own keys.
 */

/**
 * A JSON number kept as the exact text of the document, so that
 * `9007199254740993`, `1.50` or `1e400` render as written instead of going
 * through a lossy float.
 */
export class JsonNumber {
  constructor(readonly text: string) {}

  /** The nearest float; precision may be lost, which is why it is never used for rendering. */
  toNumber(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }
}

export type JsonObject = ReadonlyMap<string, JsonValue>;

export type JsonArray = readonly JsonValue[];

export type JsonValue = null | boolean | string | JsonNumber | JsonArray | JsonObject;

/** True for a JSON object; the webhook receiver uses it to refuse arrays and scalars. */
export function isJsonObject(value: JsonValue): value is JsonObject {
  return value instanceof Map;
}

/**
 * Thrown by `parsePayload` for text that is not one JSON document, or that
 * nests deeper than the limit. `position` is a 0-based index into the string
 * (UTF-16 code units), pointing at the offending character or at the end.
 */
export class InvalidJsonError extends Error {
  override name = 'InvalidJsonError';

  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

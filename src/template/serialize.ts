import { exactTextOf } from './exact-text.js';
import { JsonNumber, type JsonArray, type JsonObject, type JsonValue } from './json-value.js';

/** One open container while writing: its members are visited in order, `count` of them so far. */
interface Frame {
  readonly array: JsonArray | undefined;
  readonly entries: Iterator<[string, JsonValue]> | undefined;
  count: number;
}

/**
 * Writes compact JSON text: no white space, numbers exactly as written, keys
 * in their stored order.
 *
 * Iterative for the same reason as the parser: a value handed in by code
 * rather than by `parsePayload` may nest deeper than the call stack allows,
 * and rendering must never fail. A large object or array received as compact
 * JSON is written as its received text, sliced (see exact-text.ts).
 */
export function toJsonText(value: JsonValue): string {
  if (value instanceof Map || Array.isArray(value)) {
    const exact = exactTextOf(value as JsonObject | JsonArray);
    if (exact !== undefined) return exact;
  }
  const stack: Frame[] = [];
  let out = '';
  let next: JsonValue = value;
  for (;;) {
    if (next instanceof Map) {
      out += '{';
      stack.push({ array: undefined, entries: next.entries(), count: 0 });
    } else if (Array.isArray(next)) {
      out += '[';
      stack.push({ array: next as JsonArray, entries: undefined, count: 0 });
    } else {
      out += scalarText(next);
    }

    // Move on to the next member to write, closing every container that is done.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) return out;
      if (top.array !== undefined) {
        if (top.count < top.array.length) {
          if (top.count > 0) out += ',';
          next = top.array[top.count++] ?? null;
          break;
        }
        out += ']';
      } else {
        const member = top.entries?.next();
        if (member !== undefined && member.done !== true) {
          if (top.count++ > 0) out += ',';
          out += quote(member.value[0]) + ':';
          next = member.value[1];
          break;
        }
        out += '}';
      }
      stack.pop();
    }
  }
}

/**
 * JSON text of a non-container value. Anything that is not a JSON value at
 * run time is written as `null` rather than throwing.
 */
export function scalarText(value: JsonValue): string {
  if (typeof value === 'string') return quote(value);
  if (value instanceof JsonNumber) return value.text;
  if (value === true) return 'true';
  if (value === false) return 'false';
  return 'null';
}

/**
 * A JSON string literal. Strings that need no escape, nearly all of them, are
 * only wrapped in quotes: a `charCodeAt` scan costs a fraction of a call into
 * `JSON.stringify`, which dominated the time of large dumps. The rest go
 * through `JSON.stringify`, which (since ES2019) writes lone surrogates as
 * `\udXXX` escapes and escapes every control character, so the output is
 * always valid JSON that parses back to the same string.
 */
function quote(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) {
      return JSON.stringify(text);
    }
  }
  return '"' + text + '"';
}

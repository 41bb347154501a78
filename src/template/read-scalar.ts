import type { JsonCursor } from './json-cursor.js';
import { JsonNumber } from './json-value.js';

/**
 * Reads a number at `cur.pos` following the RFC 8259 grammar
 * `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` and keeps its text.
 *
 * Only the grammar is checked: the value is never converted, so big integers,
 * trailing zeros and out-of-range exponents survive untouched. A leading zero
 * ends the integer part, so `01` fails on the `1` that follows the number.
 */
export function readNumber(cur: JsonCursor): JsonNumber {
  const src = cur.src;
  const start = cur.pos;
  let pos = start;
  if (src.charCodeAt(pos) === 0x2d) pos++;

  const first = src.charCodeAt(pos);
  if (first === 0x30) pos++;
  else if (first >= 0x31 && first <= 0x39) pos = skipDigits(src, pos + 1);
  else throw cur.unexpected(pos);

  if (src.charCodeAt(pos) === 0x2e) {
    pos = requireDigits(cur, pos + 1);
  }

  const e = src.charCodeAt(pos);
  if (e === 0x65 || e === 0x45) {
    pos++;
    const sign = src.charCodeAt(pos);
    if (sign === 0x2b || sign === 0x2d) pos++;
    pos = requireDigits(cur, pos);
  }

  cur.pos = pos;
  return new JsonNumber(src.slice(start, pos));
}

/** Reads `true`, `false` or `null`; the first character has already been matched by the caller. */
export function readLiteral<T extends boolean | null>(cur: JsonCursor, word: string, value: T): T {
  const src = cur.src;
  const start = cur.pos;
  for (let i = 1; i < word.length; i++) {
    if (src.charCodeAt(start + i) !== word.charCodeAt(i)) throw cur.unexpected(start + i);
  }
  cur.pos = start + word.length;
  return value;
}

function skipDigits(src: string, pos: number): number {
  let c = src.charCodeAt(pos);
  while (c >= 0x30 && c <= 0x39) c = src.charCodeAt(++pos);
  return pos;
}

function requireDigits(cur: JsonCursor, pos: number): number {
  const c = cur.src.charCodeAt(pos);
  if (!(c >= 0x30 && c <= 0x39)) throw cur.unexpected(pos);
  return skipDigits(cur.src, pos + 1);
}

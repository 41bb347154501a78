import type { JsonCursor } from './json-cursor.js';

/**
 * Reads a JSON string whose opening quote is at `cur.pos` and leaves the
 * cursor just past the closing quote.
 *
 * Most payload strings have no escapes, so the common case is one scan and
 * one `slice`; escaped strings are built chunk by chunk. `\u` escapes are
 * decoded one code unit at a time, which is what keeps lone surrogates
 * (`"\ud800"`) and `\u0000` valid, exactly as `JSON.parse` does.
 */
export function readString(cur: JsonCursor): string {
  const src = cur.src;
  const end = cur.end;
  let pos = cur.pos + 1;
  let chunkStart = pos;
  // Pieces joined once at the end: `+=` would leave a chain of two small strings per escape.
  const parts: string[] = [];
  while (pos < end) {
    const c = src.charCodeAt(pos);
    if (c === 0x22) {
      cur.pos = pos + 1;
      const last = src.slice(chunkStart, pos);
      if (parts.length === 0) return last;
      parts.push(last);
      return parts.join('');
    }
    if (c === 0x5c) {
      cur.looseAt = pos;
      parts.push(src.slice(chunkStart, pos), readEscape(cur, pos));
      pos += src.charCodeAt(pos + 1) === 0x75 ? 6 : 2;
      chunkStart = pos;
    } else if (c < 0x20) {
      throw cur.fail('Unescaped control character in string', pos);
    } else {
      pos++;
    }
  }
  throw cur.unexpected(end);
}

/** Decodes the escape whose backslash is at `at`. */
function readEscape(cur: JsonCursor, at: number): string {
  const src = cur.src;
  if (at + 1 >= cur.end) throw cur.unexpected(at + 1);
  switch (src.charCodeAt(at + 1)) {
    case 0x22:
      return '"';
    case 0x5c:
      return '\\';
    case 0x2f:
      return '/';
    case 0x62:
      return '\b';
    case 0x66:
      return '\f';
    case 0x6e:
      return '\n';
    case 0x72:
      return '\r';
    case 0x74:
      return '\t';
    case 0x75: {
      let code = 0;
      for (let i = at + 2; i < at + 6; i++) {
        if (i >= cur.end) throw cur.unexpected(i);
        const digit = hexDigit(src.charCodeAt(i));
        if (digit < 0) throw cur.fail('Invalid unicode escape in string', i);
        code = code * 16 + digit;
      }
      return String.fromCharCode(code);
    }
    default:
      throw cur.fail('Invalid escape in string', at);
  }
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

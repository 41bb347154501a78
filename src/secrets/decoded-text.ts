/**
 * A text as read after some decoding, each of its UTF-16 units mapped back to the span of the
 * original text it came from (a `\u0073` is one unit spanning six characters).
 */
export interface TextView {
  text: string;
  /** Where unit `i` starts in the original text. */
  start(i: number): number;
  /** Where unit `i` ends (exclusive) in the original text. */
  end(i: number): number;
}

/** How many times escapes are decoded: a JSON error quoted inside another, itself quoted. */
const ROUNDS = 3;

/** The characters an escape this reads starts with. */
const ESCAPE_START = /[\\%&]/g;

/** A view as built: null spans mean the original text itself (unit i is character i). */
interface Spans {
  text: string;
  starts: Int32Array | null;
  ends: Int32Array | null;
}

/**
 * `text` as it is, then decoded up to three times over (as long as decoding changes it): JSON
 * string escapes (`\uXXXX`, `\/`, `\"` ...), percent-encoding (`%2B`, UTF-8 sequences) and
 * HTML character references (`&#x73;`, `&#115;`, `&amp;` ...), each where it stands.
 */
export function decodedViews(text: string): TextView[] {
  const built: Spans[] = [{ text, starts: null, ends: null }];
  for (let round = 0; round < ROUNDS; round++) {
    const next = decodeOnce(built[built.length - 1] as Spans);
    if (!next) break;
    built.push(next);
  }
  return built.map(({ text: decoded, starts, ends }) => ({
    text: decoded,
    start: starts ? (i) => starts[i] as number : (i) => i,
    end: ends ? (i) => ends[i] as number : (i) => i + 1,
  }));
}

/** The view decoded once more, or undefined when there is nothing to decode. */
function decodeOnce(view: Spans): Spans | undefined {
  const source = view.text;
  ESCAPE_START.lastIndex = 0;
  if (!ESCAPE_START.test(source)) return undefined;
  const pieces: string[] = [];
  const starts = new Int32Array(source.length);
  const ends = new Int32Array(source.length);
  const startOf = (i: number) => (view.starts ? (view.starts[i] as number) : i);
  const endOf = (i: number) => (view.ends ? (view.ends[i] as number) : i + 1);
  let units = 0;
  let changed = false;
  let i = 0;
  while (i < source.length) {
    ESCAPE_START.lastIndex = i;
    const next = ESCAPE_START.exec(source);
    const plainEnd = next ? next.index : source.length;
    // A run without escapes: each unit keeps its span.
    if (plainEnd > i) {
      pieces.push(source.slice(i, plainEnd));
      for (let j = i; j < plainEnd; j++, units++) {
        starts[units] = startOf(j);
        ends[units] = endOf(j);
      }
      i = plainEnd;
      continue;
    }
    const found = escapeAt(source, i);
    const [decoded, length] = found ? [found.decoded, found.length] : [source[i] as string, 1];
    changed ||= found !== undefined;
    pieces.push(decoded);
    for (let k = 0; k < decoded.length; k++, units++) {
      starts[units] = startOf(i);
      ends[units] = endOf(i + length - 1);
    }
    i += length;
  }
  return changed
    ? { text: pieces.join(''), starts: starts.subarray(0, units), ends: ends.subarray(0, units) }
    : undefined;
}

const JSON_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

const HTML_NAMED: Readonly<Record<string, string>> = {
  amp: '&',
  quot: '"',
  apos: "'",
  lt: '<',
  gt: '>',
  sol: '/',
  colon: ':',
  equals: '=',
  quest: '?',
};

/** The escape starting at `i`, decoded, and how many characters it takes; else undefined. */
function escapeAt(text: string, i: number): { decoded: string; length: number } | undefined {
  const char = text[i];
  if (char === '\\') {
    const next = text[i + 1];
    if (next === 'u' && /^[0-9a-f]{4}$/i.test(text.slice(i + 2, i + 6)))
      return { decoded: String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)), length: 6 };
    const simple = next === undefined ? undefined : JSON_ESCAPES[next];
    return simple === undefined ? undefined : { decoded: simple, length: 2 };
  }
  if (char === '%') return percentAt(text, i);
  if (char === '&') {
    const match = /^&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,6});/i.exec(text.slice(i, i + 12));
    if (!match) return undefined;
    const name = (match[1] as string).toLowerCase();
    let decoded: string | undefined;
    if (name.startsWith('#')) {
      const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      decoded = code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
    } else decoded = HTML_NAMED[name];
    return decoded === undefined ? undefined : { decoded, length: match[0].length };
  }
  return undefined;
}

/** `%XX`, or the `%XX` of one UTF-8 character of several bytes, decoded. */
function percentAt(text: string, i: number): { decoded: string; length: number } | undefined {
  const byteAt = (at: number) =>
    text[at] === '%' && /^[0-9a-f]{2}$/i.test(text.slice(at + 1, at + 3))
      ? parseInt(text.slice(at + 1, at + 3), 16)
      : undefined;
  const lead = byteAt(i);
  if (lead === undefined) return undefined;
  if (lead < 0x80) return { decoded: String.fromCharCode(lead), length: 3 };
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  if (size === 0) return undefined;
  const bytes = [lead];
  for (let k = 1; k < size; k++) {
    const byte = byteAt(i + 3 * k);
    if (byte === undefined || (byte & 0xc0) !== 0x80) return undefined;
    bytes.push(byte);
  }
  const decoded = Buffer.from(bytes).toString('utf8');
  return decoded.includes('\uFFFD') ? undefined : { decoded, length: 3 * size };
}

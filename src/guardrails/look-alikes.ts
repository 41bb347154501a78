/**
 * Real text writes the characters values are made of in other ways: a no-break or thin space
 * between groups, a non-breaking hyphen or an en dash, full-width digits and letters (`＠`,
 * `．`), a tab, or an invisible mark inside a value. Redaction reads a plain copy of the text,
 * and maps what it finds back to the text as written, so that a placeholder covers the whole
 * value with its odd characters.
 */

// Tested first on every text: most texts have none of these, and then nothing else is done.
const LOOK_ALIKE =
  /[\t\u00a0\u00ad\u1680\u180e\u2000-\u2013\u202a-\u202f\u205f-\u2064\u2066-\u2069\u2212\u3000\ufe52\ufe59\ufe5a\ufe63\ufe6b\ufeff\uff01-\uff5e]/;
const LOOK_ALIKES = new RegExp(LOOK_ALIKE.source, 'g');

/** The plain character for `code`: a space, a `-`, ASCII for a full-width form, '' for a mark. */
function plain(code: number): string {
  if (code >= 0xff01) return String.fromCharCode(code - 0xfee0);
  if (code === 0x09 || code === 0xa0 || code === 0x1680 || code === 0x3000) return ' ';
  if ((code >= 0x2000 && code <= 0x200a) || code === 0x202f || code === 0x205f) return ' ';
  if ((code >= 0x2010 && code <= 0x2013) || code === 0x2212 || code === 0xfe63) return '-';
  if (code === 0xfe52) return '.';
  if (code === 0xfe59) return '(';
  if (code === 0xfe5a) return ')';
  if (code === 0xfe6b) return '@';
  // Soft hyphen, zero-width spaces and joiners, direction marks, word joiner, BOM: invisible.
  return '';
}

/** A text read plain, and where each of its positions was in the text as written. */
export interface PlainText {
  text: string;
  /** Position in the text as written of each position of `text`; absent: the same. */
  written?: Int32Array;
}

/** The text with look-alikes written plainly: the same text (the same object) when it has none. */
export function plainText(text: string): PlainText {
  if (!LOOK_ALIKE.test(text)) return { text };
  const dropped: number[] = [];
  const out = text.replace(LOOK_ALIKES, (char: string, at: number) => {
    const replacement = plain(char.charCodeAt(0));
    if (replacement === '') dropped.push(at);
    return replacement;
  });
  if (dropped.length === 0) return { text: out };
  const written = new Int32Array(out.length);
  for (let at = 0, was = 0, next = 0; at < out.length; at++, was++) {
    while (dropped[next] === was) {
      next++;
      was++;
    }
    written[at] = was;
  }
  return { text: out, written };
}

/** Where the value `[start, end)` of the plain text is in the text as written. */
export function writtenRange(plain: PlainText, start: number, end: number): [number, number] {
  const { written } = plain;
  if (!written) return [start, end];
  return [written[start] as number, (written[end - 1] as number) + 1];
}

import { plainText, writtenRange } from './look-alikes.js';
import { KINDS, REDACTION_KINDS, type RedactionKind } from './redaction-kinds.js';

/** A Redactor's numbering as plain JSON (`Redactor.numbering()`). */
export interface RedactorNumbering {
  placeholders: Record<string, [string, string][]>;
  bySpelling: Record<string, [string, string][]>;
  sent: [string, string][];
}

interface Match {
  start: number;
  end: number;
  kind: RedactionKind;
}

/**
 * Redacts the texts of one event, in the order they are sent (system prompt, history oldest
 * first, prompt): each value becomes `[KIND_n]`, numbered per kind in order of first appearance,
 * and a value met again gets the placeholder it got first. Where kinds overlap, the earlier kind
 * of REDACTION_KINDS wins, and a match always covers a whole value. Values are found in the text
 * read plain (see look-alikes.ts): every text sent to the AI goes through `redact`, so a value
 * written with other spaces, dashes, full-width forms or invisible marks is found as the plain
 * one, and its placeholder covers it as written.
 */
export class Redactor {
  private readonly kinds: RedactionKind[];
  /** Per kind, placeholder by the value's canonical spelling. */
  private readonly placeholders = new Map<RedactionKind, Map<string, string>>();
  /** Per kind, placeholder by the value as written: a value met again skips its canonical form. */
  private readonly bySpelling = new Map<RedactionKind, Map<string, string>>();
  /** Every placeholder sent, with the value it stands for (as first written). */
  readonly sent = new Map<string, string>();

  constructor(kinds: readonly RedactionKind[], numbering?: RedactorNumbering) {
    this.kinds = REDACTION_KINDS.filter((kind) => kinds.includes(kind));
    if (numbering) this.takeUp(numbering);
  }

  /** The numbering so far as plain JSON, to go on with it later (an event parked for approval). */
  numbering(): RedactorNumbering {
    const entries = (maps: Map<RedactionKind, Map<string, string>>) =>
      Object.fromEntries([...maps].map(([kind, map]) => [kind, [...map]]));
    return {
      placeholders: entries(this.placeholders),
      bySpelling: entries(this.bySpelling),
      sent: [...this.sent],
    };
  }

  private takeUp(numbering: RedactorNumbering): void {
    const fill = (
      maps: Map<RedactionKind, Map<string, string>>,
      from: Record<string, [string, string][]>,
    ) => {
      for (const [kind, pairs] of Object.entries(from))
        maps.set(kind as RedactionKind, new Map(pairs));
    };
    fill(this.placeholders, numbering.placeholders);
    fill(this.bySpelling, numbering.bySpelling);
    for (const [placeholder, value] of numbering.sent) this.sent.set(placeholder, value);
  }

  redact(text: string): string {
    const plain = plainText(text);
    const matches = this.matches(plain.text);
    if (matches.length === 0) return text;
    let out = '';
    let at = 0;
    for (const match of matches) {
      const [start, end] = writtenRange(plain, match.start, match.end);
      const written = text.slice(start, end);
      const value = plain.text === text ? written : plain.text.slice(match.start, match.end);
      out += text.slice(at, start) + this.placeholderFor(match.kind, written, value);
      at = end;
    }
    return out + text.slice(at);
  }

  /** Distinct values per kind over everything redacted so far (kinds with none left out). */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [kind, values] of this.placeholders) counts[kind] = values.size;
    return counts;
  }

  /** `written`: the value as written; `plain`: as read plain (one value, whatever its look-alikes). */
  private placeholderFor(kind: RedactionKind, written: string, plain: string): string {
    let spellings = this.bySpelling.get(kind);
    if (!spellings) this.bySpelling.set(kind, (spellings = new Map()));
    let placeholder = spellings.get(written);
    if (placeholder !== undefined) return placeholder;
    let byValue = this.placeholders.get(kind);
    if (!byValue) this.placeholders.set(kind, (byValue = new Map()));
    const canonical = KINDS[kind].canonical(plain);
    placeholder = byValue.get(canonical);
    if (placeholder === undefined) {
      placeholder = `[${KINDS[kind].label}_${byValue.size + 1}]`;
      byValue.set(canonical, placeholder);
      this.sent.set(placeholder, written);
    }
    spellings.set(written, placeholder);
    return placeholder;
  }

  /**
   * The matches of every kind, in order. A value inside a longer value of another kind belongs
   * to the longer one (the digits of an IBAN are not a card); other overlaps go to the kind
   * first in REDACTION_KINDS.
   */
  private matches(text: string): Match[] {
    const found = this.kinds.map((kind) => KINDS[kind].find(text));
    const all: Match[] = [];
    found.forEach((values, at) => {
      const kind = this.kinds[at] as RedactionKind;
      for (const [start, end] of values) all.push({ start, end, kind });
    });
    if (all.length <= 1) return all;
    all.sort((a, b) => a.start - b.start || b.end - a.end);
    if (!overlapping(all)) return all;
    // Per kind (in the order of this.kinds), its values not inside a longer one.
    const outer = this.kinds.map((): Match[] => []);
    let cover: Match | undefined;
    for (const match of all) {
      const inside =
        cover !== undefined &&
        match.end <= cover.end &&
        !(match.start === cover.start && match.end === cover.end);
      if (inside) continue;
      outer[this.kinds.indexOf(match.kind)]?.push(match);
      if (cover === undefined || match.end > cover.end) cover = match;
    }
    let taken: Match[] = [];
    for (const ofKind of outer) {
      const added = notOverlapping(taken, ofKind);
      if (added.length) taken = taken.length ? mergeByStart(taken, added) : added;
    }
    return taken;
  }
}

/** Whether any two of `sorted` (by start) overlap: most texts have nothing to settle. */
function overlapping(sorted: readonly Match[]): boolean {
  let end = 0;
  for (const match of sorted) {
    if (match.start < end) return true;
    end = match.end;
  }
  return false;
}

/** The values of `found` (in order) that overlap nothing already taken (in order). */
function notOverlapping(taken: readonly Match[], found: readonly Match[]): Match[] {
  if (taken.length === 0) return found as Match[];
  const free: Match[] = [];
  let i = 0;
  for (const value of found) {
    while (i < taken.length && (taken[i] as Match).end <= value.start) i++;
    const next = taken[i];
    if (next === undefined || next.start >= value.end) free.push(value);
  }
  return free;
}

function mergeByStart(a: readonly Match[], b: readonly Match[]): Match[] {
  const merged: Match[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && x.start < y.start)) {
      merged.push(x as Match);
      i++;
    } else {
      merged.push(y);
      j++;
    }
  }
  return merged;
}

const PLACEHOLDER = new RegExp(
  `\\[(?:${REDACTION_KINDS.map((kind) => KINDS[kind].label).join('|')})_\\d+\\]`,
  'g',
);

/**
 * Puts the original values back for the placeholders that were sent; any other placeholder the
 * model wrote stays as written. `inJson`: the reply is JSON text, so values go in escaped as in a
 * JSON string (a PEM block's line breaks would otherwise break it).
 */
export function restorePlaceholders(
  reply: string,
  sent: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
  inJson = false,
): string {
  const lookup =
    sent instanceof Map
      ? (key: string) => sent.get(key)
      : (key: string) =>
          Object.hasOwn(sent, key) ? (sent as Record<string, string>)[key] : undefined;
  return reply.replace(PLACEHOLDER, (placeholder) => {
    const value = lookup(placeholder);
    if (value === undefined) return placeholder;
    return inJson ? JSON.stringify(value).slice(1, -1) : value;
  });
}

import { jsonObjectText } from '../forms.js';

/** A stretch of a word diff: kept, only in the current reply, or only in the candidate's. */
export interface DiffPart {
  kind: 'same' | 'removed' | 'added';
  text: string;
}

/** A field of a JSON reply: its path, and its value (JSON text) on each side, or undefined. */
export interface FieldChange {
  path: string;
  current: string | undefined;
  candidate: string | undefined;
  kind: 'same' | 'changed' | 'removed' | 'added';
}

/** Past this many words (or lines) a side, the diff is the whole of each (the table would be too large). */
const MAX_TOKENS = 2000;

/** Words and the spaces after them, so the parts put back together give the texts exactly. */
const words = (text: string) => text.match(/\S+\s*|\s+/g) ?? [];

/** Lines with their line breaks, likewise. */
const lines = (text: string) => text.match(/[^\n]*\n|[^\n]+/g) ?? [];

/** A word diff of two replies (longest common subsequence of their words). */
export function wordDiff(current: string, candidate: string): DiffPart[] {
  return tokenDiff(current, candidate, words);
}

/** A line diff of two texts (a template, a system prompt). */
export function lineDiff(current: string, candidate: string): DiffPart[] {
  return tokenDiff(current, candidate, lines);
}

function tokenDiff(
  current: string,
  candidate: string,
  split: (text: string) => string[],
): DiffPart[] {
  const a = split(current);
  const b = split(candidate);
  if (a.length > MAX_TOKENS || b.length > MAX_TOKENS) {
    return merge([
      { kind: 'removed', text: current },
      { kind: 'added', text: candidate },
    ]);
  }
  // common[i][j]: the longest common run of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = common[i] as Uint16Array;
      const next = common[i + 1] as Uint16Array;
      row[j] =
        a[i] === b[j]
          ? (next[j + 1] as number) + 1
          : Math.max(next[j] as number, row[j + 1] as number);
    }
  }
  const parts: DiffPart[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      parts.push({ kind: 'same', text: a[i++] as string });
      j++;
    } else if (
      i < a.length &&
      (j === b.length ||
        ((common[i + 1] as Uint16Array)[j] as number) >=
          ((common[i] as Uint16Array)[j + 1] as number))
    ) {
      // Removed words come before the words that replace them.
      parts.push({ kind: 'removed', text: a[i++] as string });
    } else {
      parts.push({ kind: 'added', text: b[j++] as string });
    }
  }
  return merge(parts);
}

function merge(parts: DiffPart[]): DiffPart[] {
  const merged: DiffPart[] = [];
  for (const part of parts) {
    if (part.text === '') continue;
    const last = merged.at(-1);
    if (last?.kind === part.kind) last.text += part.text;
    else merged.push({ ...part });
  }
  return merged;
}

/** Both replies parsed as JSON objects, else undefined (then the word diff is shown). */
export function jsonObjects(
  current: string,
  candidate: string,
): [Record<string, unknown>, Record<string, unknown>] | undefined {
  const a = jsonObjectText(current);
  const b = jsonObjectText(candidate);
  return a && b ? [a, b] : undefined;
}

/** A field diff of two JSON objects: every leaf path, in the order first seen. */
export function fieldDiff(
  current: Record<string, unknown>,
  candidate: Record<string, unknown>,
): FieldChange[] {
  const a = leaves(current);
  const b = leaves(candidate);
  const paths = [...new Set([...a.keys(), ...b.keys()])];
  return paths.map((path) => {
    const before = a.get(path);
    const after = b.get(path);
    const kind =
      before === undefined
        ? 'added'
        : after === undefined
          ? 'removed'
          : before === after
            ? 'same'
            : 'changed';
    return { path, current: before, candidate: after, kind };
  });
}

/** Leaf values (and empty objects or arrays) by dotted path, as JSON text. */
function leaves(value: unknown, path = '', into = new Map<string, string>()): Map<string, string> {
  const entries =
    value !== null && typeof value === 'object' ? Object.entries(value as object) : undefined;
  if (!entries || entries.length === 0) {
    into.set(path || '.', JSON.stringify(value));
    return into;
  }
  for (const [key, inner] of entries) leaves(inner, path ? `${path}.${key}` : key, into);
  return into;
}

import type { Found } from './found.js';

// The lookbehinds start each match at the beginning of a word, so a long word is read once, not
// once per character.
const EMAIL =
  /(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-]|\.[A-Za-z0-9])/g;

/** Addresses `local@domain.tld`. */
export function findEmails(text: string): Found[] {
  if (!text.includes('@')) return [];
  return Array.from(text.matchAll(EMAIL), (m) => [m.index, m.index + m[0].length] as const);
}

const TOKEN =
  /(?<![\w-])(?:sk-[A-Za-z0-9_-]{17,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}(?![0-9A-Za-z]))/g;
const PEM_MARKER = /-----(BEGIN|END) ((?:[A-Z0-9]+ )*PRIVATE KEY)-----/g;

/**
 * API keys and tokens of well-known shapes, and PEM private keys from `-----BEGIN` to their
 * `-----END …-----`. An `sk-` word needs a digit and a letter after the prefix: prose such as
 * `sk-learn-based-classifier` is no key.
 */
export function findSecrets(text: string): Found[] {
  const found: Found[] = [];
  if (text.includes('-----')) found.push(...pemBlocks(text));
  if (/sk-|gh[pousr]_|github_pat_|xox|AKIA/.test(text)) {
    for (const m of text.matchAll(TOKEN)) {
      const token = m[0];
      if (token.startsWith('sk-') && !(/\d/.test(token) && /[A-Za-z]/.test(token.slice(3)))) {
        continue;
      }
      found.push([m.index, m.index + token.length]);
    }
  }
  return withoutOverlaps(found);
}

/** Pairs each BEGIN marker with the next END of the same label: one pass, whatever the text. */
function pemBlocks(text: string): Found[] {
  const blocks: Found[] = [];
  let open: { label: string; start: number } | undefined;
  for (const m of text.matchAll(PEM_MARKER)) {
    const [marker, side, label] = m as unknown as [string, string, string];
    if (side === 'BEGIN') open ??= { label, start: m.index };
    else if (open?.label === label) {
      blocks.push([open.start, m.index + marker.length]);
      open = undefined;
    }
  }
  return blocks;
}

/** Values in order of their start; of two that overlap, the one that starts first stays. */
export function withoutOverlaps(found: Found[]): Found[] {
  found.sort((a, b) => a[0] - b[0]);
  const kept: Found[] = [];
  for (const value of found) {
    const last = kept[kept.length - 1];
    if (!last || value[0] >= last[1]) kept.push(value);
  }
  return kept;
}

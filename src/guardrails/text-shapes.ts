import type { Found } from './found.js';

// Tried only where a local part starts: the lookbehind makes that the start of the run of
// local-part characters before an `@`, so that is the one place an address can start.
const EMAIL =
  /(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-]|\.[A-Za-z0-9])/y;

/** `[\w.%+-]`: what a local part is made of. */
function isLocalChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    c === 0x5f ||
    c === 0x2e ||
    c === 0x25 ||
    c === 0x2b ||
    c === 0x2d
  );
}

/**
 * Addresses `local@domain.tld`. Read from each `@` back to where its local part starts, not by
 * a pattern tried at every word: most texts have few `@`s and many words.
 */
export function findEmails(text: string): Found[] {
  const found: Found[] = [];
  let after = 0;
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', Math.max(at + 1, after))) {
    let start = at;
    while (start > 0 && isLocalChar(text.charCodeAt(start - 1))) start--;
    // A local part inside the address before it: no address starts there.
    if (start === at || start < after) continue;
    EMAIL.lastIndex = start;
    const m = EMAIL.exec(text);
    if (m) found.push([start, (after = start + m[0].length)]);
  }
  return found;
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

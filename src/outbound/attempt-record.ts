import type { OutboundResponse } from './outbound-client.js';

/** How much of an answer's body Brain Logs keeps per attempt, in characters. */
export const ANSWER_EXCERPT_CHARS = 512;

/**
 * Bytes of a body an outbound client must keep for a whole excerpt: 4 per character at most in
 * UTF-8, and room for the whitespace the excerpt collapses.
 */
export const ANSWER_EXCERPT_BYTES = 8 * ANSWER_EXCERPT_CHARS;

/**
 * The start of an answer's body as Brain Logs shows it: NULs replaced (PostgreSQL text holds
 * none), whitespace collapsed, at most ANSWER_EXCERPT_CHARS characters. Secrets are cut out of
 * the body before (src/secrets/cut-secrets.ts), so no part of one is left at the cut.
 */
export function answerExcerpt(res: OutboundResponse): string {
  const text = res.bodyStart.replaceAll('\u0000', '\uFFFD').replace(/\s+/g, ' ').trim();
  return [...text].slice(0, ANSWER_EXCERPT_CHARS).join('');
}

/** A URL as an attempt's target: without userinfo, query or fragment, where a token may sit. */
export function urlTarget(url: string): string {
  try {
    const { origin, pathname } = new URL(url);
    return `${origin}${pathname}`;
  } catch {
    return 'an unusable URL';
  }
}

/** A secret URL's host alone, harmless to show ("hooks.slack.com"); null when not a URL. */
export function hostOf(url: string | null | undefined): string | null {
  try {
    return url ? new URL(url).host : null;
  } catch {
    return null;
  }
}

import type { OutboundResponse } from './outbound-client.js';

/** How much of an answer's body Brain Logs keeps per attempt, in characters. */
export const ANSWER_EXCERPT_CHARS = 512;

/**
 * Bytes of a body an outbound client must keep for a whole excerpt: 4 per character at most in
 * UTF-8, and room for the whitespace the excerpt collapses.
 */
export const ANSWER_EXCERPT_BYTES = 8 * ANSWER_EXCERPT_CHARS;

/**
 * `text` with `secret` cut out: the secret itself, and when it is a URL its path too (the path
 * of a webhook URL holds its token; a host alone is harmless).
 */
export function withoutSecret(text: string, secret: string | null | undefined): string {
  if (!secret) return text;
  let out = text.replaceAll(secret, '[secret]');
  try {
    const { pathname } = new URL(secret);
    if (pathname.length > 1) out = out.replaceAll(pathname, '/[secret]');
  } catch {
    // not a URL: a token, replaced above
  }
  return out;
}

/**
 * The start of an answer's body as Brain Logs shows it: NULs replaced (PostgreSQL text holds
 * none), the secrets cut out before the cut (so no part of one is left at the end), whitespace
 * collapsed, at most ANSWER_EXCERPT_CHARS characters.
 */
export function answerExcerpt(
  res: OutboundResponse,
  secrets: readonly (string | null | undefined)[] = [],
): string {
  let text = res.bodyStart.replaceAll('\u0000', '\uFFFD');
  for (const secret of secrets) text = withoutSecret(text, secret);
  text = text.replace(/\s+/g, ' ').trim();
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

/**
 * The secrets a URL itself may carry, to cut out of its answers: its password, its query, and
 * each query value long enough to be a token (a `?token=`).
 */
export function secretsOfUrl(url: string): string[] {
  try {
    const { password, search, searchParams } = new URL(url);
    const values = [...searchParams.values()].filter((value) => value.length >= 8);
    return [search.slice(1), ...values, password].filter(Boolean);
  } catch {
    return [url];
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

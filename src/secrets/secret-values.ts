import type { SecretBox } from './secret-box.js';

/**
 * Which values the service keeps secret: the one rule. A secret is sealed at rest (its column
 * listed in secret-columns.ts, each room writing it through `storedForm` or the box), never read
 * back whole by the API, and cut out of every text from outside (cut-secrets.ts: its `values`
 * and `urls` are these two kinds).
 *
 * - `value`: secret whole, always: signing and verification secrets, API keys, bot tokens, the
 *   webhook token (looked up by its hash, sealed for display), a chat platform's webhook URL
 *   (its path holds its token), and the values of a tool's or an MCP server's headers.
 * - `url`: a URL an admin gives (the reply URL, a `webhook` destination's, an alert's notify
 *   URL, a tool's URL) is secret when it holds credentials (`user:password@`, or a user alone)
 *   or a query string. It is then sealed whole and read back without its password (its query
 *   as given); its password, its Basic credential and its query's values are cut out of texts.
 *   A URL without either is stored and shown as it is.
 */
export type SecretKind = 'value' | 'url';

/** Whether `value`, of this kind, is a secret. */
export function isSecret(kind: SecretKind, value: string): boolean {
  return kind === 'value' || urlHoldsSecrets(value);
}

/** Whether a URL holds credentials or a query string (something that is not a URL: yes). */
export function urlHoldsSecrets(url: string): boolean {
  const parsed = parsedUrl(url);
  if (!parsed) return true;
  return parsed.username !== '' || parsed.password !== '' || parsed.search !== '';
}

/** What is stored for `plain`: sealed when it is a secret (and there is a key), else as it is. */
export function storedForm(box: SecretBox, kind: SecretKind, plain: string): string;
export function storedForm(
  box: SecretBox,
  kind: SecretKind,
  plain: string | null | undefined,
): string | null;
export function storedForm(
  box: SecretBox,
  kind: SecretKind,
  plain: string | null | undefined,
): string | null {
  if (plain === null || plain === undefined) return null;
  return isSecret(kind, plain) ? box.seal(plain) : plain;
}

/** A URL as the API and the panel read it back: without its password, the rest as given. */
export function shownUrl(url: string): string {
  const parsed = parsedUrl(url);
  if (!parsed?.password) return url;
  parsed.password = '';
  return parsed.href;
}

/**
 * The URL to store when `sent` replaces `stored`: the stored one, password and all, when `sent`
 * is what the API read back of it (a form saved again, a list of destinations sent back as it
 * was read); `sent` otherwise. A password is only ever dropped by a URL that differs.
 */
export function keptUrl(sent: string, stored: string | null | undefined): string {
  if (!stored || !parsedUrl(stored)?.password) return sent;
  const shown = parsedUrl(shownUrl(stored));
  return shown && parsedUrl(sent)?.href === shown.href ? stored : sent;
}

/** A URL with a scheme (`https://…`), parsed; undefined for anything else. */
export function parsedUrl(text: string): URL | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

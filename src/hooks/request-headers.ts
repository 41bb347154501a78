import type { IncomingHttpHeaders } from 'node:http';

/** Headers that carry credentials of the sender: kept on events only as this placeholder. */
export const REDACTED = '[redacted]';
const ALWAYS_REDACTED = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key'];

/**
 * The request headers as an event keeps them: lower-case names (as Node gives them), repeated
 * headers joined with ", ", and credentials replaced by "[redacted]" — those of ALWAYS_REDACTED
 * and the header holding the channel's own secret (`header-secret` verification).
 */
export function keptHeaders(
  headers: IncomingHttpHeaders,
  secretHeader?: string,
): Record<string, string> {
  const secret = secretHeader?.toLowerCase();
  // A plain object: one without a prototype is a dictionary to V8, slower to fill and to turn
  // into JSON. A header named __proto__ cannot reach it: Node leaves it out of `req.headers`
  // (and assigning a string to __proto__ would change nothing).
  const kept: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    kept[name] =
      ALWAYS_REDACTED.includes(name) || name === secret
        ? REDACTED
        : Array.isArray(value)
          ? value.join(', ')
          : value;
  }
  return kept;
}

/** A header's value by lower-case name; empty values count as absent. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === undefined || text.trim() === '' ? undefined : text;
}

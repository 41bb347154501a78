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
  const redacted = secretHeader
    ? [...ALWAYS_REDACTED, secretHeader.toLowerCase()]
    : ALWAYS_REDACTED;
  // fromEntries defines own properties, so even a header named __proto__ is kept as data.
  return Object.fromEntries(
    Object.entries(headers)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [
        name,
        redacted.includes(name) ? REDACTED : Array.isArray(value) ? value.join(', ') : value,
      ]),
  );
}

/** A header's value by lower-case name; empty values count as absent. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === undefined || text.trim() === '' ? undefined : text;
}

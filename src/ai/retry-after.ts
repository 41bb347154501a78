/** The longest wait a `Retry-After` can impose on one event: a day. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * A `Retry-After` header (RFC 9110, section 10.2.3) in milliseconds from `now`: either
 * delay-seconds or an HTTP date. Undefined when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  // Some servers send fractions ("1.5"); they are not in the RFC but mean what they say.
  if (/^\d+\.\d+$/.test(text)) return Math.min(Math.ceil(Number(text) * 1000), MAX_RETRY_AFTER_MS);
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

import type { IncomingHttpHeaders } from 'node:http';
import type { AppError } from '../platform/errors.js';
import { hookErrors } from './hook-errors.js';

/** How long a sender asked to wait for the reply, and what to answer about it. */
export interface RequestedWait {
  /** In milliseconds (0: not at all), clamped to the most the server holds an answer. */
  ms: number;
  /**
   * `wait=N` (N after clamping) when the wait came from a `Prefer` header: the answer's
   * `Preference-Applied` (RFC 7240), which tells the sender how long it was really held at most.
   */
  preferenceApplied: string | undefined;
}

/**
 * How long the sender asked to wait for the reply, clamped to `maxSeconds`. `?wait=N` must be a
 * positive whole number (else `400 invalid_wait`); `Prefer: wait=N` (RFC 7240) that does not
 * parse is ignored, as that RFC says. The query wins when both are given.
 */
export function requestedWait(
  req: { headers: IncomingHttpHeaders; query: unknown },
  maxSeconds: number,
): RequestedWait | AppError {
  const query = (req.query as Record<string, unknown> | undefined)?.wait;
  if (query !== undefined) {
    const text = Array.isArray(query) ? query.join(',') : String(query);
    if (!/^\d{1,9}$/.test(text) || Number(text) < 1) return hookErrors.invalidWait(text);
    return { ms: Math.min(Number(text), maxSeconds) * 1000, preferenceApplied: undefined };
  }
  const preferred = preferredWait(req.headers.prefer);
  if (preferred === undefined) return { ms: 0, preferenceApplied: undefined };
  const seconds = Math.min(preferred, maxSeconds);
  return { ms: seconds * 1000, preferenceApplied: `wait=${seconds}` };
}

/** The `wait` preference of Prefer headers (`respond-async, wait=10`), when it is valid. */
function preferredWait(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const preferences = (Array.isArray(header) ? header.join(',') : header).split(',');
  for (const preference of preferences) {
    // Parameters after `;` belong to the preference, not to its value.
    const [token, ...value] = (preference.split(';')[0] ?? '').split('=');
    if (token?.trim().toLowerCase() !== 'wait') continue;
    const text = value
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1');
    return /^\d{1,9}$/.test(text) && Number(text) >= 1 ? Number(text) : undefined;
  }
  return undefined;
}

import type { IncomingHttpHeaders } from 'node:http';
import type { AppError } from '../platform/errors.js';
import { hookErrors } from './hook-errors.js';

/**
 * How long the sender asked to wait for the reply, in milliseconds (0: not at all), clamped to
 * `maxSeconds`. `?wait=N` must be a positive whole number (else `400 invalid_wait`);
 * `Prefer: wait=N` (RFC 7240) that does not parse is ignored, as that RFC says. The query wins
 * when both are given.
 */
export function requestedWait(
  req: { headers: IncomingHttpHeaders; query: unknown },
  maxSeconds: number,
): number | AppError {
  const query = (req.query as Record<string, unknown> | undefined)?.wait;
  if (query !== undefined) {
    const text = Array.isArray(query) ? query.join(',') : String(query);
    if (!/^\d{1,9}$/.test(text) || Number(text) < 1) return hookErrors.invalidWait(text);
    return Math.min(Number(text), maxSeconds) * 1000;
  }
  const seconds = preferredWait(req.headers.prefer);
  return seconds === undefined ? 0 : Math.min(seconds, maxSeconds) * 1000;
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

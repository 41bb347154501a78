import { pino, type Logger } from 'pino';
import { logToStandardOutput } from './log-output.js';

export type { Logger };

/** Secrets are removed here, at the logger, so no call site can forget. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.verification_secret',
  '*.reply_secret',
  '*.previous_secret',
  '*.reply_previous_secret',
  '*.alert_secret',
  '*.notify_secret',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.webhookToken',
  '*.webhook_url',
];

/** A logger writing to `destination`, by default to standard output without ever waiting for it. */
export function createLogger(
  level: string,
  destination: pino.DestinationStream = logToStandardOutput(),
): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/**
 * Webhook URLs carry their secret token in the path: `/hooks/abc…` is logged as `/hooks/[redacted]`
 * (and so do the one-time links of admin invitations, `/invitations/…`).
 * Wherever it stands: routing ignores case (`/HOOKS/abc…` is received too), a request line may
 * hold an absolute URL (`http://host/hooks/abc…`), and a badly joined URL (`//hooks/abc…`) still
 * carries a real token even though it is not received.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/\/hooks\/+[^/?#]*/gi, '/hooks/[redacted]')
    .replace(/\/invitations\/+[^/?#]*/gi, '/invitations/[redacted]');
}

import { pino, type Logger } from 'pino';

export type { Logger };

/** Secrets are removed here, at the logger, so no call site can forget. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.apiKey',
  '*.token',
  '*.webhookToken',
  '*.webhook_url',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
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

/** Webhook URLs carry their secret token in the path: `/hooks/abc…` is logged as `/hooks/[redacted]`. */
export function redactUrl(url: string): string {
  return url.replace(/^\/hooks\/[^/?#]*/, '/hooks/[redacted]');
}

import { Webhook } from 'standardwebhooks';

/**
 * The `webhook-signature` header: one `v1,<base64>` entry per secret (the current one, and the
 * previous one during a rotation's overlap), space-separated, as Standard Webhooks says a
 * receiver accepts when any entry matches. Signed by the reference implementation.
 */
export function signatureHeader(
  webhookId: string,
  timestamp: Date,
  body: string,
  secrets: readonly string[],
): string {
  return secrets.map((secret) => new Webhook(secret).sign(webhookId, timestamp, body)).join(' ');
}

/**
 * The Standard Webhooks headers of one attempt. The id stays the same on every attempt; the
 * timestamp is the attempt's own (receivers refuse old ones), and the signature covers both.
 */
export function messageHeaders(
  webhookId: string,
  body: string,
  secrets: readonly string[],
  now: Date,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'hookprompt-delivery',
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signatureHeader(webhookId, now, body, secrets),
  };
}

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

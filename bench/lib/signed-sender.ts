import { createHmac, randomBytes } from 'node:crypto';
import type { BenchSender } from './targets.js';

/**
 * A Standard Webhooks sender: every request has its own webhook-id (so automatic duplicate
 * detection stores a key for each, as with a real sender) and a fresh signature of the body.
 * Signed here with node:crypto, the cheapest way, so the load generator takes as little as
 * possible of the CPU the server under test shares with it.
 */
export function standardWebhooksSender(body: string): BenchSender {
  const key = randomBytes(24);
  const secret = `whsec_${key.toString('base64')}`;
  const prefix = randomBytes(4).toString('hex');
  let sequence = 0;
  return {
    channel: {
      verification: { scheme: 'standard-webhooks', secret },
      dedup: { mode: 'auto', window_s: 86_400 },
    },
    headersFor() {
      const id = `msg_${prefix}_${++sequence}`;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', key)
        .update(`${id}.${timestamp}.${body}`)
        .digest('base64');
      return {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${signature}`,
      };
    },
  };
}

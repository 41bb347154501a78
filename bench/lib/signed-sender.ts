import { createHmac, randomBytes } from 'node:crypto';
import type { BenchSender } from './targets.js';

/**
 * A Standard Webhooks sender: every request has its own webhook-id (so automatic duplicate
 * detection stores a key for each, as with a real sender) and a signature of the body.
 *
 * The signatures are made before a run (`prepare`), not while it is measured: a real sender
 * signs on its own machine, but here the load generator shares the server's two cores, and
 * signing on the fly doubled its CPU per request (0.024 → 0.046 ms), which the server then
 * lost to waiting for a core. A run that outlasts the prepared ones signs the rest on the fly.
 * Each is kept as its header lines, one string per request, which closed-loop.ts sends as is.
 */
export function standardWebhooksSender(body: string): BenchSender {
  const key = randomBytes(24);
  const secret = `whsec_${key.toString('base64')}`;
  const prefix = randomBytes(4).toString('hex');
  const bodyBytes = Buffer.from(body);
  let sequence = 0;
  let prepared: string[] = [];
  let next = 0;

  const sign = (): string => {
    const id = `msg_${prefix}_${++sequence}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac('sha256', key)
      .update(`${id}.${timestamp}.`)
      .update(bodyBytes)
      .digest('base64');
    return (
      `webhook-id: ${id}\r\n` +
      `webhook-timestamp: ${timestamp}\r\n` +
      `webhook-signature: v1,${signature}\r\n`
    );
  };

  return {
    channel: {
      verification: { scheme: 'standard-webhooks', secret },
      dedup: { mode: 'auto', window_s: 86_400 },
    },
    prepare(count) {
      prepared = Array.from({ length: count }, sign);
      next = 0;
    },
    headerLines: () => prepared[next++] ?? sign(),
  };
}

import type { Config } from '../platform/config.js';
import { OutboundClient } from '../outbound/outbound-client.js';
import type { TransportDeps } from './destination-transport.js';

/** Enough of an answer to read `ok` and an error; Slack and Telegram echo the message after it. */
const KEEP_BODY_BYTES = 16 * 1024;

/**
 * The HTTP clients destinations are sent with, from the delivery settings: one for URLs typed
 * into the API (guarded unless `allowPrivate`), one for the operator's SLACK_API_URL and
 * TELEGRAM_API_URL. `close()` ends their idle connections at shutdown.
 */
export function createTransportDeps(
  delivery: Config['delivery'],
  allowPrivate = delivery.allowPrivate,
): TransportDeps & { close(): void } {
  const options = { timeoutMs: delivery.timeoutMs, keepBodyBytes: KEEP_BODY_BYTES };
  const client = new OutboundClient({
    ...options,
    allowPrivate,
    setting: 'DELIVERY_ALLOW_PRIVATE',
  });
  const platformClient = new OutboundClient({ ...options, allowPrivate: true });
  return {
    client,
    platformClient,
    slackApiUrl: delivery.slackApiUrl,
    telegramApiUrl: delivery.telegramApiUrl,
    close() {
      client.close();
      platformClient.close();
    },
  };
}

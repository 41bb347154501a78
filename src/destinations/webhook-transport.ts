import { urlTarget } from '../outbound/attempt-record.js';
import type { OutboundResponse } from '../outbound/outbound-client.js';
import { messageHeaders } from '../outbound/standard-webhooks.js';
import type { DestinationTransport, RequestOutcome } from './destination-transport.js';
import { describeAnswer, onePart, postOnce, readStatus } from './platform-answers.js';

/**
 * `webhook`: a Standard Webhooks message, signed with the signing secrets given (the channel's
 * reply secret). The channel's reply URL is one too, read as `readReplyAnswer` says. Attempts
 * show the URL without its userinfo or query, which are cut out of answers like the signing
 * secrets.
 */
export const webhookTransport: DestinationTransport = {
  kind: 'webhook',
  target: ({ settings }) => (settings.url ? urlTarget(settings.url) : null),
  async send({ settings, message, deps, signal, now, partsDone }) {
    if (!settings.url)
      return onePart({ outcome: 'fail', status: null, error: 'no url' }, partsDone);
    const secrets = message.signingSecrets ?? [];
    if (secrets.length === 0)
      return onePart({ outcome: 'fail', status: null, error: 'no signing secret' }, partsDone);
    const body = message.webhookBody ?? JSON.stringify({ text: message.text });
    const headers = messageHeaders(message.id, body, secrets, now);
    return onePart(
      await postOnce(
        deps.client,
        settings.url,
        body,
        headers,
        settings.replyUrl ? readReplyAnswer : readStatus,
        { urls: [settings.url], values: secrets },
        signal,
      ),
      partsDone,
    );
  },
};

/**
 * The reply URL's reading: a 2xx is delivered; a 410 says the receiver is gone (delivery is
 * turned off until an admin turns it on again); anything else (another status, a redirect,
 * which is never followed) is retried, no sooner than its `Retry-After`.
 */
function readReplyAnswer(res: OutboundResponse): RequestOutcome {
  if (res.status >= 200 && res.status < 300) return { outcome: 'delivered', status: res.status };
  if (res.status === 410) {
    const error = `The reply URL answered 410 Gone on ${new Date().toISOString()}; delivery is off until an admin turns it on again.`;
    return { outcome: 'gone', status: 410, error };
  }
  return {
    outcome: 'retry',
    status: res.status,
    error: redirectOr(res),
    retryAfterMs: res.retryAfterMs,
  };
}

/** A non-2xx answer in words: where a 3xx pointed, or the status and the body's start. */
function redirectOr(res: OutboundResponse): string {
  if (res.status < 300 || res.status >= 400) return describeAnswer(res);
  const location = res.headers.location ? ` to ${res.headers.location}` : '';
  return `HTTP ${res.status}: a redirect${location}, which is not followed; set the final URL.`;
}

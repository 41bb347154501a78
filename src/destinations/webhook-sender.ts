import { urlTarget } from '../outbound/attempt-record.js';
import { messageHeaders } from '../outbound/standard-webhooks.js';
import type { DestinationSender } from './destination-sender.js';
import { onePart, postOnce, readStatus } from './platform-answers.js';

/**
 * `webhook`: a Standard Webhooks message, as reply delivery sends, signed with the signing
 * secrets given (the channel's reply secret). Attempts show its URL without its userinfo or
 * query, which are cut out of answers like the signing secrets.
 */
export const webhookSender: DestinationSender = {
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
        readStatus,
        { urls: [settings.url], values: secrets },
        signal,
      ),
      partsDone,
    );
  },
};

import { hostOf } from '../outbound/attempt-record.js';
import type { DestinationTransport } from './destination-transport.js';
import { onePart, postOnce, readStatus } from './platform-answers.js';

/** `teams`: a Workflows webhook ("When a Teams webhook request is received") given an Adaptive Card. */
export const teamsTransport: DestinationTransport = {
  kind: 'teams',
  target({ settings }) {
    const host = hostOf(settings.secret);
    return `Teams workflow${host ? ` (${host})` : ''}`;
  },
  async send({ settings, message, deps, signal, partsDone }) {
    const secret = settings.secret;
    if (!secret) return onePart({ outcome: 'fail', status: null, error: 'no webhook_url' });
    const outcome = await postOnce(
      deps.client,
      secret,
      adaptiveCard(message.text),
      {},
      readStatus,
      { values: [secret] },
      signal,
    );
    return onePart(outcome, partsDone);
  },
};

/** The message as one wrapped text block of an Adaptive Card. */
export function adaptiveCard(text: string) {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          type: 'AdaptiveCard',
          version: '1.4',
          body: [{ type: 'TextBlock', text, wrap: true }],
        },
      },
    ],
  };
}

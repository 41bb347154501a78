import { hostOf } from '../outbound/attempt-record.js';
import type { OutboundResponse } from '../outbound/outbound-client.js';
import type { DestinationTransport, RequestOutcome } from './destination-transport.js';
import { DISCORD_MAX_CONTENT, splitText } from './message-parts.js';
import {
  describeAnswer,
  jsonAnswer,
  onePart,
  postOnce,
  readStatus,
  secondsAsMs,
  sendParts,
} from './platform-answers.js';

/**
 * `discord`: the webhook URL with `wait=true` (so an error is answered, not dropped) and the
 * `thread_id` when given; `content` cut at 2000 characters, mentions of nobody parsed.
 */
export const discordTransport: DestinationTransport = {
  kind: 'discord',
  target({ settings, fields }) {
    const host = hostOf(settings.secret);
    const thread = fields.thread_id ? `, thread ${fields.thread_id}` : '';
    return `Discord webhook${host ? ` (${host})` : ''}${thread}`;
  },
  async send({ settings, fields, message, deps, signal, partsDone }) {
    const secret = settings.secret;
    if (!secret) return onePart({ outcome: 'fail', status: null, error: 'no webhook_url' });
    let url: string;
    try {
      const target = new URL(secret);
      target.searchParams.set('wait', 'true');
      if (fields.thread_id) target.searchParams.set('thread_id', fields.thread_id);
      url = target.toString();
    } catch {
      return onePart({ outcome: 'fail', status: null, error: 'webhook_url is not a URL' });
    }
    return sendParts(splitText(message.text, DISCORD_MAX_CONTENT), partsDone, (content) =>
      postOnce(
        deps.client,
        url,
        { content, allowed_mentions: { parse: [] } },
        {},
        readWebhook,
        { values: [secret] },
        signal,
      ),
    );
  },
};

/** Discord's 429 says in its body how many seconds to wait (`retry_after`, fractional). */
function readWebhook(res: OutboundResponse): RequestOutcome {
  if (res.status !== 429) return readStatus(res);
  const answer = jsonAnswer(res);
  const retryAfterMs = Math.max(res.retryAfterMs, secondsAsMs(answer?.retry_after));
  return { outcome: 'retry', status: 429, error: describeAnswer(res), retryAfterMs };
}

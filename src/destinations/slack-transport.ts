import { hostOf } from '../outbound/attempt-record.js';
import type { OutboundResponse } from '../outbound/outbound-client.js';
import type { DestinationTransport, RequestOutcome } from './destination-transport.js';
import {
  describeAnswer,
  jsonAnswer,
  okOf,
  onePart,
  postOnce,
  readStatus,
} from './platform-answers.js';

/** Slack's `error` codes that no retry mends: the delivery fails at once. */
export const SLACK_FATAL_ERRORS: ReadonlySet<string> = new Set([
  'invalid_auth',
  'token_revoked',
  'account_inactive',
  'channel_not_found',
  'not_in_channel',
  'is_archived',
]);

/**
 * `&`, `<` and `>` escaped as Slack's formatting rules ask: a reply can then never mention
 * `<!everyone>` or `<!channel>`, nor link anywhere under another text.
 */
export const slackEscape = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * `slack`: with a `channel`, `chat.postMessage` of the Web API with the bot token (answered
 * `{"ok": ...}` with 200); without, a POST to the Incoming Webhook URL kept as the secret.
 */
export const slackTransport: DestinationTransport = {
  kind: 'slack',
  target({ settings, fields }) {
    if (!settings.fields.channel) {
      const host = hostOf(settings.secret);
      return `Slack Incoming Webhook${host ? ` (${host})` : ''}`;
    }
    if (!fields.channel) return null;
    const thread = fields.thread_ts ? `, thread_ts ${fields.thread_ts}` : '';
    return `Slack chat.postMessage to ${fields.channel}${thread}`;
  },
  async send({ settings, fields, message, deps, signal, partsDone }) {
    const text = slackEscape(message.text);
    const secret = settings.secret;
    if (!secret)
      return onePart({ outcome: 'fail', status: null, error: 'no token or webhook_url' });
    if (!settings.fields.channel) {
      const outcome = await postOnce(
        deps.client,
        secret,
        { text },
        {},
        readStatus,
        {
          values: [secret],
        },
        signal,
      );
      return onePart(outcome, partsDone);
    }
    const channel = fields.channel;
    if (!channel)
      return onePart({ outcome: 'fail', status: null, error: 'channel rendered empty' });
    const body = { channel, text, ...(fields.thread_ts ? { thread_ts: fields.thread_ts } : {}) };
    const outcome = await postOnce(
      deps.platformClient,
      `${deps.slackApiUrl}/chat.postMessage`,
      body,
      { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${secret}` },
      readWebApi,
      { values: [secret] },
      signal,
    );
    return onePart(outcome, partsDone);
  },
};

/** The Web API answers 200 with `ok`; `ok: false` carries the error code. 429 says when to retry. */
function readWebApi(res: OutboundResponse): RequestOutcome {
  if (res.status !== 200) return readStatus(res, describeAnswer(res));
  const answer = jsonAnswer(res);
  if (okOf(res) === true) return { outcome: 'delivered', status: 200 };
  const error = typeof answer?.error === 'string' ? answer.error : describeAnswer(res);
  return SLACK_FATAL_ERRORS.has(error)
    ? { outcome: 'fail', status: 200, error }
    : { outcome: 'retry', status: 200, error, retryAfterMs: res.retryAfterMs };
}

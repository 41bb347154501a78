import type { OutboundResponse } from '../outbound/outbound-client.js';
import type { DestinationTransport, RequestOutcome } from './destination-transport.js';
import { splitText, TELEGRAM_MAX_TEXT } from './message-parts.js';
import {
  describeAnswer,
  jsonAnswer,
  okOf,
  onePart,
  postOnce,
  secondsAsMs,
  sendParts,
} from './platform-answers.js';

/** Answers no retry mends: a bad request, a bot blocked or kicked, a wrong or revoked token. */
const FATAL_STATUSES = new Set([400, 401, 403, 404]);

/**
 * `telegram`: the Bot API's `sendMessage`, plain text (no `parse_mode`), cut into messages of
 * at most 4096 UTF-16 units; the first answers the message `reply_to` names, when it names one.
 */
export const telegramTransport: DestinationTransport = {
  kind: 'telegram',
  target: ({ fields }) =>
    fields.chat_id ? `Telegram sendMessage to chat ${fields.chat_id}` : null,
  async send({ settings, fields, message, deps, signal, partsDone }) {
    const token = settings.secret;
    if (!token) return onePart({ outcome: 'fail', status: null, error: 'no bot_token' });
    const chatId = fields.chat_id;
    if (!chatId) return onePart({ outcome: 'fail', status: null, error: 'chat_id rendered empty' });
    const replyTo = /^\d{1,15}$/.test(fields.reply_to ?? '') ? Number(fields.reply_to) : undefined;
    const url = `${deps.telegramApiUrl}/bot${token}/sendMessage`;
    return sendParts(splitText(message.text, TELEGRAM_MAX_TEXT), partsDone, (text, index) =>
      postOnce(
        deps.platformClient,
        url,
        {
          chat_id: chatIdValue(chatId),
          text,
          ...(replyTo !== undefined && index === 0
            ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
            : {}),
        },
        {},
        readBotApi,
        { values: [token] },
        signal,
      ),
    );
  },
};

/** A numeric chat id as a number (as Telegram documents it), a `@channelusername` as text. */
const chatIdValue = (chatId: string) => (/^-?\d{1,15}$/.test(chatId) ? Number(chatId) : chatId);

/** `{"ok": true}` is delivered; 429 waits `parameters.retry_after`; 400 and 403 fail at once. */
function readBotApi(res: OutboundResponse): RequestOutcome {
  const answer = jsonAnswer(res);
  if (res.status === 200 && okOf(res) === true) return { outcome: 'delivered', status: 200 };
  const error = typeof answer?.description === 'string' ? answer.description : describeAnswer(res);
  if (FATAL_STATUSES.has(res.status)) return { outcome: 'fail', status: res.status, error };
  const parameters = answer?.parameters as { retry_after?: unknown } | undefined;
  const retryAfterMs = Math.max(res.retryAfterMs, secondsAsMs(parameters?.retry_after));
  return { outcome: 'retry', status: res.status, error, retryAfterMs };
}

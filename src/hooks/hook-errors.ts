import { AppError } from '../platform/errors.js';
import { budgetExceeded } from '../spend/budget-errors.js';
import { MAX_CONTENT_ENCODINGS } from './decode-body.js';

// A decoder finishes within milliseconds: room in the budget is soon there again.
const DECODERS_BUSY_RETRY_S = 1;

/** Every refusal a webhook sender can see, by the `code` it carries. */
export const hookErrors = {
  channelNotFound: () =>
    new AppError(
      404,
      'channel_not_found',
      'Channel not found',
      'No channel has this webhook URL. It may be mistyped, replaced by a newer URL, or deleted.',
    ),
  channelDisabled: () =>
    new AppError(
      403,
      'channel_disabled',
      'Channel disabled',
      'This channel is disabled; an admin can enable it in the Channels editor.',
    ),
  /** `resets_at` and `chat_quota` let a sender know when to try again without asking an admin. */
  quotaExceeded: (quota: { chatQuota: number; resetsAt: Date }) =>
    new AppError(
      403,
      'quota_exceeded',
      'Chat quota used up',
      `The workspace has used its chat quota of ${quota.chatQuota} for this month; ` +
        `it starts again at ${quota.resetsAt.toISOString()}.`,
      {},
      { resets_at: quota.resetsAt.toISOString(), chat_quota: quota.chatQuota },
    ),
  /** As the quota's: when the month's spend starts again at 0 (a provider test's refusal too). */
  budgetExceeded,
  rateLimited: (retryAfterSeconds: number) =>
    new AppError(
      429,
      'rate_limited',
      'Too many requests',
      `Too many requests; slow down and retry in ${retryAfterSeconds} s.`,
      {
        'Retry-After': String(retryAfterSeconds),
      },
    ),
  /** curl's `-d` and `--data-binary` send a form's media type unless told otherwise. */
  unsupportedMediaType: (contentType: string) =>
    new AppError(
      415,
      'unsupported_media_type',
      'Unsupported media type',
      `The body must be JSON (Content-Type: application/json), not ${contentType || 'that'} ` +
        `(with curl: -H 'Content-Type: application/json' --data-binary @event.json).`,
    ),
  /** GitHub's default delivery: form-encoded with the JSON in a `payload` field. */
  formPayload: () =>
    new AppError(
      415,
      'unsupported_media_type',
      'Unsupported media type',
      'The body is a form with the JSON in a "payload" field, as GitHub sends by default. ' +
        'Send the JSON itself instead. GitHub: Content type → application/json ' +
        "(the repository's Settings → Webhooks → Edit).",
    ),
  invalidJson: (reason: string) =>
    new AppError(400, 'invalid_json', 'Invalid JSON', `The body is not valid JSON: ${reason}`),
  emptyBody: () =>
    new AppError(
      400,
      'invalid_json',
      'Invalid JSON',
      'The body is empty: send a JSON object, such as {"order": {"id": 1}}, ' +
        'with the header Content-Type: application/json.',
    ),
  payloadNotObject: () =>
    new AppError(
      400,
      'payload_not_object',
      'Payload is not an object',
      'The body must be a JSON object, such as {"order": {"id": 1}}.',
    ),
  /** For a compressed body the limit applies to its size once decoded, which the sender may not expect. */
  payloadTooLarge: (limitBytes: number, encoding?: string) =>
    new AppError(
      413,
      'payload_too_large',
      'Payload too large',
      encoding === undefined
        ? `The body is larger than the limit of ${limitBytes} bytes (BODY_LIMIT).`
        : `The body, once decoded from its Content-Encoding (${encoding}), is larger than the ` +
            `limit of ${limitBytes} bytes (BODY_LIMIT): the limit applies to the size after decoding.`,
    ),
  requestTimeout: () =>
    new AppError(
      408,
      'request_timeout',
      'Request timeout',
      'The body did not arrive in time; nothing was stored. Send it again.',
      // The rest of the body may still be on its way: this connection cannot carry another request.
      { Connection: 'close' },
    ),
  methodNotAllowed: (allow: 'POST' | 'GET' = 'POST') =>
    new AppError(
      405,
      'method_not_allowed',
      'Method not allowed',
      allow === 'POST' ? 'Webhooks accept POST only.' : 'A webhook event is read with GET only.',
      { Allow: allow },
    ),
  invalidWait: (given: string) =>
    new AppError(
      400,
      'invalid_wait',
      'Invalid wait',
      `wait must be a whole number of seconds from 1 up, such as wait=10, not ${JSON.stringify(given)}.`,
    ),
  eventNotFound: () =>
    new AppError(
      404,
      'event_not_found',
      'Event not found',
      'This webhook URL has no event with this id.',
    ),
  senderNotAllowed: () =>
    new AppError(
      403,
      'sender_not_allowed',
      'Sender not allowed',
      "This channel accepts webhooks only from the addresses in its allowed list; the sender's address is not in it.",
    ),
  originNotAllowed: (origin: string) =>
    new AppError(
      403,
      'origin_not_allowed',
      'Origin not allowed',
      `This channel takes requests from web pages only on the origins in its allowed list; ${JSON.stringify(origin.slice(0, 200))} is not in it.`,
    ),
  signatureInvalid: (reason: string) =>
    new AppError(401, 'signature_invalid', 'Signature invalid', reason),
  unsupportedEncoding: (encoding: string) =>
    new AppError(
      415,
      'unsupported_media_type',
      'Unsupported media type',
      `Content-Encoding ${encoding} is not supported; send the body as it is, or as gzip, deflate or br.`,
    ),
  tooManyEncodings: (count: number) =>
    new AppError(
      415,
      'unsupported_media_type',
      'Unsupported media type',
      `The body names ${count} content encodings; at most ${MAX_CONTENT_ENCODINGS} are decoded.`,
    ),
  /** Compressed bodies decoded at once hold at most DECODE_MEMORY_LIMIT; this one did not fit. */
  decodersBusy: () =>
    new AppError(
      503,
      'service_unavailable',
      'Service unavailable',
      'Too many compressed bodies are being decoded at once; nothing was stored. ' +
        `Send it again in ${DECODERS_BUSY_RETRY_S} s.`,
      { 'Retry-After': String(DECODERS_BUSY_RETRY_S) },
    ),
  /** `event_id` names the event the key was first accepted for, which the sender can look up. */
  idempotencyKeyReused: (firstEventId: string) =>
    new AppError(
      422,
      'idempotency_key_reused',
      'Idempotency key reused',
      `This request's idempotency key was accepted on this channel for a different body ` +
        `(event ${firstEventId}) within the channel's dedup window. A new body needs a new key; ` +
        'a retry must repeat the first body exactly.',
      {},
      { event_id: firstEventId },
    ),
  invalidEncoding: (encoding: string) =>
    new AppError(
      400,
      'invalid_encoding',
      'Invalid encoding',
      `The body does not decode as its Content-Encoding (${encoding}) says.`,
    ),
};

import type { OutboundClient } from '../outbound/outbound-client.js';
import type { JsonValue } from '../template/index.js';
import type { DestinationKind, DestinationSettings } from './destination-schemas.js';

/**
 * What one attempt to send a message to a destination came to, classified once by its transport:
 *
 * - `delivered`: the platform took every part of it;
 * - `retry`: worth trying again later, no earlier than `retryAfterMs` from now when the
 *   platform asked (`Retry-After`, Telegram's `parameters.retry_after`, Discord's `retry_after`);
 * - `fail`: no later attempt can help (a revoked token, a chat that does not exist, an address
 *   that may not be reached): the delivery ends at once;
 * - `gone`: the target says it is gone for good (the reply URL's 410 Gone): its delivery is
 *   turned off, `error` says why, and the message waits until an admin turns it on again.
 *
 * `status` is the HTTP status of the last request made (null when none answered) and `error`
 * the platform's own error code or description, never holding a secret. `parts` counts the
 * parts of a long text the platform has taken so far, across attempts: the next attempt starts
 * after them, so a retried message never repeats a part. `answer` is the start of the last
 * answer's body, as Brain Logs shows it (see answerExcerpt, the secret cut out); absent when
 * no answer came.
 */
export type SendOutcome = RequestOutcome & { parts: number };

/** One request's outcome, before the parts are counted. */
export type RequestOutcome = (
  | { outcome: 'delivered'; status: number }
  | { outcome: 'retry'; status: number | null; error: string; retryAfterMs: number }
  | { outcome: 'fail'; status: number | null; error: string }
  | { outcome: 'gone'; status: number; error: string }
) & { answer?: string };

/**
 * What `sendToDestination` says of one attempt: its outcome, and where it went (the transport's
 * `target`), for Brain Logs.
 */
export type DestinationOutcome = SendOutcome & { target: string | null };

/** A rendered message for one destination. */
export interface DestinationMessage {
  /** The same on every attempt of this message: the `webhook-id` of the webhook kind. */
  id: string;
  /** The text chat platforms get (the destination's `message` rendered). */
  text: string;
  /** The webhook kind's JSON body; `{"text": text}` when not given. */
  webhookBody?: string;
  /** The webhook kind's signing secrets (`whsec_...`), the newest first. */
  signingSecrets?: readonly string[];
}

/** What the transports send with. */
export interface TransportDeps {
  /** For URLs admins typed in: refuses private addresses unless DELIVERY_ALLOW_PRIVATE. */
  client: OutboundClient;
  /** For SLACK_API_URL and TELEGRAM_API_URL: operator configuration, not SSRF-guarded. */
  platformClient: OutboundClient;
  /** Without a trailing slash. */
  slackApiUrl: string;
  /** Without a trailing slash. */
  telegramApiUrl: string;
}

/** One send of one message to one destination, its templated fields rendered. */
export interface SendRequest {
  settings: DestinationSettings;
  /** Slack's `channel`, Telegram's `chat_id` ... rendered over the event's payload. */
  fields: Readonly<Record<string, string>>;
  message: DestinationMessage;
  deps: TransportDeps;
  /** Parts taken by earlier attempts. */
  partsDone: number;
  signal?: AbortSignal;
  now: Date;
}

/**
 * A destination kind: how one message becomes its platform's request(s), and what the
 * platform's answers mean. One small transport per kind; the delivery queue (every target, the
 * reply URL too) and alerts call them through `sendToDestination` only, so a kind is one file
 * and one line in the table.
 */
export interface DestinationTransport {
  readonly kind: DestinationKind;
  send(request: SendRequest): Promise<SendOutcome>;
  /**
   * Where `send` sends the request, in words admins may read: a platform's method and chat, a
   * webhook's host, never a token nor a secret URL's path; null when nothing would be sent.
   */
  target(request: Pick<SendRequest, 'settings' | 'fields' | 'deps'>): string | null;
}

/** Options of `sendToDestination`. */
export interface SendOptions {
  /** What `{{...}}` in templated fields (`chat_id`, `thread_ts` ...) read; none: they render empty. */
  payload?: JsonValue;
  partsDone?: number;
  signal?: AbortSignal;
  now?: Date;
}

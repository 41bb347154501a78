import type { IncomingHttpHeaders } from 'node:http';
import contentType from 'content-type';
import type { Histogram } from 'prom-client';
import type { Database } from '../db/database.js';
import type { AppError } from '../platform/errors.js';
import {
  InvalidJsonError,
  checkPayload,
  isJsonObject,
  parsePayload,
  type JsonValue,
} from '../template/index.js';
import { hashWebhookToken } from '../channels/webhook-token.js';
import { ChannelCache } from './channel-cache.js';
import type { DecodeBudget } from './decode-budget.js';
import { GroupCommit } from '../db/group-commit.js';
import { HOOK_DEADLINES } from './hook-deadlines.js';
import { hookErrors } from './hook-errors.js';
import { dedupKey, keyedBodyHash } from './dedup.js';
import * as repo from './ingest-repo.js';
import { limitBody, type BodyResult } from './read-body.js';
import { keptBody } from './rejected-body.js';
import { keptHeaders } from './request-headers.js';
import { checkSender } from './sender-checks.js';
import * as batch from './store-event-batch.js';
import { senderAddress } from './verify/allowed-ips.js';
import { renderThreadKey } from './thread-key.js';

export type { ReceivingChannel } from './ingest-repo.js';
export type { FirstEvent } from './store-event-batch.js';

/** One webhook request, from the route or from the panel's "send test event". */
export interface IncomingWebhook {
  /** The channel of the request's token (see `findChannel`). */
  channel: repo.ReceivingChannel;
  headers: IncomingHttpHeaders;
  /** As read from the request (see `readBody`), or whole bytes to be held to the body limit. */
  body: BodyResult | Buffer;
  /** The sender's address as TRUST_PROXY resolves it; undefined for the panel's test events. */
  senderIp: string | undefined;
  /**
   * A test event sent by a signed-in admin from the panel: not from a sender, so neither the
   * sender's address nor a signature is asked of it.
   */
  fromPanel?: boolean;
  /**
   * What is stored (the event, or the refused request) is committed by then or never: past it
   * the answer is a DatabaseTimeoutError (503), and nothing was stored. By default
   * HOOK_DEADLINES.storeMs from now.
   */
  deadline?: number;
}

export type IngestOutcome =
  | { accepted: true; eventId: string }
  /** A duplicate: nothing was stored; the answer is the first event's, as it stands now. */
  | { accepted: true; eventId: string; duplicate: batch.FirstEvent }
  /** `eventId` is that of the rejected event kept for Brain Logs (none for a 404). */
  | { accepted: false; eventId?: string; error: AppError };

/** The database notification sent when a channel changes (see migrations/0004). */
export const CHANNEL_CHANGED = 'hookprompt_channel_changed';

// ignoreBOM: a byte-order mark stays in the payload, which is kept byte for byte.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Receives webhook events: checks a request against CONTRACT order and stores what it decides. */
export class IngestService {
  private readonly batches: GroupCommit<batch.IncomingEvent, batch.StoredEvent>;
  private readonly cache = new ChannelCache();
  private stopListening: (() => Promise<void>) | undefined;

  constructor(
    private readonly db: Database,
    private readonly bodyLimitBytes: number,
    /** Times each batch's write (the metrics' eventBatchWrites). */
    batchWrites: Pick<Histogram, 'startTimer'>,
    /** The memory the decoders of compressed bodies may hold at once. */
    readonly decodeBudget: DecodeBudget,
  ) {
    const store = new batch.EventBatchStore(db);
    const write = async (events: batch.IncomingEvent[], deadline: number) => {
      const written = batchWrites.startTimer();
      try {
        return await store.store(events, deadline);
      } finally {
        written();
      }
    };
    this.batches = new GroupCommit(write, {
      maxBatchSize: 200,
      // One batch at a time: batches of one workspace queue on its quota row anyway, and
      // each statement has a fixed cost in the database (about 0.4 ms of its CPU), so what
      // arrives meanwhile is better sent as one larger batch. A second write in flight
      // halved the batches and cost PostgreSQL a quarter more CPU per webhook (docs/scaling.md).
      maxConcurrentWrites: 1,
    });
  }

  /** Keeps the channel cache in step with changes made by any process. */
  async start(): Promise<void> {
    this.stopListening = await this.db.listen(CHANNEL_CHANGED, (tokenHash) =>
      this.cache.forget(tokenHash),
    );
  }

  async stop(): Promise<void> {
    const stopListening = this.stopListening;
    this.stopListening = undefined;
    await stopListening?.();
  }

  /** Drops a changed channel from the cache now, without waiting for its notification. */
  forgetChannel(tokenHash: string): void {
    this.cache.forget(tokenHash);
  }

  /** @param deadline when to stop asking the database (a 503 for the sender) */
  async findChannel(
    token: string,
    deadline = Date.now() + HOOK_DEADLINES.lookupMs,
  ): Promise<repo.ReceivingChannel | undefined> {
    const tokenHash = hashWebhookToken(token);
    const cached = this.cache.get(tokenHash);
    if (cached) return cached;
    const channel = await repo.findReceivingChannel(this.db, { tokenHash }, { deadline });
    if (channel) this.cache.set(channel);
    return channel;
  }

  /** The receiving side of a channel the caller already knows by id (the panel). */
  findChannelById(channelId: string): Promise<repo.ReceivingChannel | undefined> {
    return repo.findReceivingChannel(this.db, { id: channelId });
  }

  /**
   * Runs the checks that need the body, in order: disabled, sender address, size, encoding,
   * signature, media type, JSON, object, duplicate (or a key reused for another body), quota;
   * and stores what it decides.
   */
  async receive(webhook: IncomingWebhook): Promise<IngestOutcome> {
    const { channel, headers } = webhook;
    const deadline = webhook.deadline ?? Date.now() + HOOK_DEADLINES.storeMs;
    const reject = (kept: ReturnType<RefusalRecord['with']>, error: AppError) =>
      this.reject(channel, kept, error, deadline);
    const received = Buffer.isBuffer(webhook.body)
      ? limitBody(webhook.body, this.bodyLimitBytes)
      : webhook.body;
    const request = new RefusalRecord(
      keptHeaders(headers, secretHeader(channel)),
      senderAddress(webhook.senderIp),
    );
    if (!channel.enabled) {
      const kept = received.tooLarge
        ? request.with(received.head, received.received)
        : request.with(received.bytes);
      return reject(kept, hookErrors.channelDisabled());
    }
    const checked = await checkSender(
      channel,
      headers,
      received,
      webhook.senderIp,
      { bodyLimitBytes: this.bodyLimitBytes, decodeBudget: this.decodeBudget },
      webhook.fromPanel,
    );
    if (!checked.ok) return reject(request.with(checked.kept, checked.keptOf), checked.error);
    const body = checked.bytes;
    const mediaType = headers['content-type'];
    if (!isJsonMediaType(mediaType)) {
      const refusal = isFormWithPayload(mediaType, body)
        ? hookErrors.formPayload()
        : hookErrors.unsupportedMediaType(mediaType ?? '');
      return reject(request.with(body), refusal);
    }

    const event = incomingEvent(channel, headers, body, request);
    if ('refusal' in event) return reject(request.with(body), event.refusal);
    const stored = await this.store(event, deadline);
    if (stored.outcome === 'duplicate') {
      return { accepted: true, eventId: stored.first.id, duplicate: stored.first };
    }
    if (stored.outcome === 'key_reused')
      return reject(request.with(body), hookErrors.idempotencyKeyReused(stored.firstId));
    const { outcome, eventId } = stored;
    if (outcome === 'accepted') return { accepted: true, eventId: eventId as string };
    return { accepted: false, eventId, error: await this.storeRefusal(channel, outcome) };
  }

  /**
   * Stores an event through the group commit. One whose key an earlier event holds is answered
   * as that event's duplicate, or `key_reused` when that event's body was another; when the key's
   * window has passed (the key is then freed), it is stored again. Every try is bounded by
   * `deadline`.
   */
  private async store(
    event: batch.IncomingEvent,
    deadline: number,
  ): Promise<
    | Exclude<batch.StoredEvent, { outcome: 'key_taken' }>
    | { outcome: 'key_reused'; firstId: string }
  > {
    for (;;) {
      const stored = await this.batches.submit(event, deadline);
      if (stored.outcome !== 'key_taken') return stored;
      const held = await batch.countDuplicateOfKey(this.db, event, deadline);
      if (!held) continue;
      const { sameBody, ...first } = held;
      return sameBody
        ? { outcome: 'duplicate', first }
        : { outcome: 'key_reused', firstId: first.id };
    }
  }

  // Why the storing statement refused an event that passed every earlier check.
  private async storeRefusal(
    channel: repo.ReceivingChannel,
    outcome: 'quota_exceeded' | 'channel_disabled' | 'channel_not_found',
  ): Promise<AppError> {
    if (outcome === 'quota_exceeded')
      return hookErrors.quotaExceeded(await repo.findQuota(this.db, channel.workspace_id));
    this.cache.forget(channel.webhook_token_hash);
    return outcome === 'channel_disabled'
      ? hookErrors.channelDisabled()
      : hookErrors.channelNotFound();
  }

  /**
   * Records a request refused before its body was looked at (a bad `wait`), as a `rejected`
   * event like every other refusal of an existing channel's request.
   */
  refuse(webhook: IncomingWebhook, error: AppError): Promise<IngestOutcome> {
    const { channel } = webhook;
    const received = Buffer.isBuffer(webhook.body)
      ? limitBody(webhook.body, this.bodyLimitBytes)
      : webhook.body;
    const request = new RefusalRecord(
      keptHeaders(webhook.headers, secretHeader(channel)),
      senderAddress(webhook.senderIp),
    );
    const kept = received.tooLarge
      ? request.with(received.head, received.received)
      : request.with(received.bytes);
    return this.reject(
      channel,
      kept,
      error,
      webhook.deadline ?? Date.now() + HOOK_DEADLINES.storeMs,
    );
  }

  private async reject(
    channel: repo.ReceivingChannel,
    request: ReturnType<RefusalRecord['with']>,
    error: AppError,
    deadline: number,
  ): Promise<IngestOutcome> {
    const eventId = await this.db.transaction(
      (tx) => repo.insertRejectedEvent(tx, channel, request, error.code),
      { deadline },
    );
    return { accepted: false, eventId, error };
  }
}

/** What a rejected event keeps of its request. */
class RefusalRecord {
  constructor(
    readonly headers: Record<string, string>,
    readonly senderIp: string | undefined,
  ) {}

  /** `bytes` is the start of a body of `bodyBytes` bytes in all. */
  with(bytes: Buffer, bodyBytes = bytes.length) {
    const { text, truncated } = keptBody(bytes, bodyBytes);
    return {
      payload: text,
      payloadTruncated: truncated,
      headers: this.headers,
      senderIp: this.senderIp,
    };
  }
}

/**
 * The event a valid JSON object body makes, or why the body is refused. The payload's tree is
 * built only when a thread key or a payload dedup key is rendered from it; otherwise the body is
 * only checked (checkPayload). Synchronous on purpose: the tree is garbage once this returns,
 * instead of living on in the receiver's async frame while the event is stored (it would survive
 * young-generation collections and be copied by each).
 */
function incomingEvent(
  channel: repo.ReceivingChannel,
  headers: IncomingHttpHeaders,
  body: Buffer,
  request: RefusalRecord,
): batch.IncomingEvent | { refusal: AppError } {
  let text: string;
  let payload: JsonValue | undefined;
  try {
    text = utf8.decode(body);
    const needsTree = Boolean(channel.thread_key_template) || channel.dedup.mode === 'payload';
    if (needsTree) payload = parsePayload(text);
    const isObject = payload ? isJsonObject(payload) : checkPayload(text).isObject;
    if (!isObject) return { refusal: hookErrors.payloadNotObject() };
  } catch (error) {
    const reason = error instanceof InvalidJsonError ? error.message : 'it is not valid UTF-8 text';
    return { refusal: hookErrors.invalidJson(reason) };
  }
  const key = dedupKey(channel.dedup, headers, () => payload as JsonValue);
  return {
    channel,
    payload: text,
    headers: request.headers,
    senderIp: request.senderIp,
    dedupKey: key,
    bodyHash: key === undefined ? undefined : keyedBodyHash(channel.dedup, body),
    threadKey: payload ? renderThreadKey(channel.thread_key_template, payload) : null,
  };
}

/** The header that carries the channel's secret itself, which events must not keep. */
function secretHeader(channel: repo.ReceivingChannel): string | undefined {
  return channel.verification.scheme === 'header-secret' ? channel.verification.header : undefined;
}

/** JSON, any `application/*+json`, or no Content-Type at all (read as JSON). */
export function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined || header.trim() === '') return true;
  try {
    const { type } = contentType.parse(header);
    return type === 'application/json' || /^application\/[a-z0-9!#$&^_.+-]+\+json$/.test(type);
  } catch {
    return false;
  }
}

/** A form-encoded body with a `payload` field: what GitHub sends unless told to send JSON. */
export function isFormWithPayload(header: string | undefined, bytes: Buffer): boolean {
  try {
    if (contentType.parse(header ?? '').type !== 'application/x-www-form-urlencoded') return false;
  } catch {
    return false;
  }
  return new URLSearchParams(bytes.toString('latin1')).has('payload');
}

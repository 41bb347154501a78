import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AppError } from '../platform/errors.js';
import type { JsonValue, PayloadPaths } from '../template/index.js';
import type { BodyTurns } from './body-turns.js';
import type { DecodeBudget } from './decode-budget.js';
import { HOOK_DEADLINES } from './hook-deadlines.js';
import type { ReceivingChannel } from './ingest-repo.js';
import type { HookRateLimits } from './rate-limits.js';
import { limitBody, type BodyResult } from './read-body.js';
import { keptBody } from './rejected-body.js';
import { keptHeaders } from './request-headers.js';
import type { FirstEvent, IncomingEvent, StoredEvent } from './store-event-batch.js';
import { renderThreadKey } from './thread-key.js';
import { senderAddress } from './verify/allowed-ips.js';
import type { EventTrace } from '../tracing/tracing.js';

// What the steps of the pipeline (intake-pipeline.ts) read and leave, and what they use.

/** A refusal kept as a `rejected` event: `kept` is the start of a body of `of` bytes in all. */
export interface Refusal {
  error: AppError;
  kept: Buffer;
  of: number;
}

/** One `POST /hooks/:token`, however it reached the receiver (see hook-fast-path.ts). */
export interface HookRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The path segment after `/hooks/`, decoded. */
  token: string;
  /** The parsed query string, as Express's `req.query` gives it. */
  query: unknown;
  /** The sender's address as TRUST_PROXY resolves it (Express's `req.ip`). */
  senderIp: string | undefined;
}

/** What the steps use besides the request: the receiver's limits, lookups and its one writer. */
export interface IntakeParts {
  readonly limits: HookRateLimits;
  readonly bodyLimitBytes: number;
  readonly bodyTimeoutMs: number;
  readonly syncWaitMaxS: number;
  /** The memory the decoders of compressed bodies may hold at once. */
  readonly decodeBudget: DecodeBudget;
  /** Large bodies are checked one per turn of the event loop (see body-turns.ts). */
  readonly bodyTurns: BodyTurns;
  /** The channel of a token, from the cache when it is there; undefined when there is none. */
  findChannel(token: string, deadline: number): Promise<ReceivingChannel | undefined>;
  /** The channel as committed now, past the cache (it changed while the request was checked). */
  findChannelAgain(tokenHash: string, deadline: number): Promise<ReceivingChannel | undefined>;
  /** The one writer: what it returns was committed by `deadline`, or it throws. */
  store(event: IncomingEvent, deadline: number): Promise<StoredEvent>;
}

export type IngestOutcome =
  | { accepted: true; eventId: string }
  /** Stored `filtered`: the payload did not meet the channel's `accept_when`. */
  | { accepted: true; eventId: string; filtered: true }
  /** A duplicate: nothing was stored; the answer is the first event's, as it stands now. */
  | { accepted: true; eventId: string; duplicate: FirstEvent }
  /** Slack's `url_verification` on a Slack-verified channel: answered, nothing stored. */
  | { accepted: true; eventId?: undefined; challenge: string }
  /** `eventId` is that of the rejected event kept for Brain Logs (none when nothing was kept). */
  | { accepted: false; eventId?: string; error: AppError };

/** One webhook on its way: the request, and what each step leaves for the next. */
export class Intake {
  /** When the request arrived: the lookup's and the body's deadlines count from here. */
  readonly receivedAt = Date.now();
  /** Set by `token` (given, for a test event); every later step reads it. */
  channel!: ReceivingChannel;
  /** Set by `body`: the bytes as they arrived, or the start of a body past the limit. */
  received!: BodyResult;
  /** Set by `body`: what is stored must be committed by then, or never (a 503). */
  storeBy!: number;
  /** How long the sender waits for the reply, in milliseconds (0: not at all). */
  waitMs = 0;
  /** The `Preference-Applied` of the answer, when the wait came from `Prefer: wait=N`. */
  preferenceApplied: string | undefined = undefined;
  /** Set by `size`, decoded by `encoding`: the body as the sender wrote it. */
  body!: Buffer;
  /** Set by `JSON`: the body as text, kept byte for byte. */
  text!: string;
  /** The payload's tree, built only when a thread key or a payload dedup key needs it. */
  tree: JsonValue | undefined = undefined;
  /** The payload read at the paths of the channel's `accept_when`, when no tree is built. */
  paths: PayloadPaths | undefined = undefined;
  isObject = false;
  dedupKey: string | undefined = undefined;
  bodyHash: string | undefined = undefined;
  /** Set by `accept_when`: the condition the payload did not meet; the event is stored `filtered`. */
  filteredBy: string | undefined = undefined;
  /** The trace of the request's `webhook receive` span, kept with the event (src/tracing/). */
  trace: EventTrace | undefined = undefined;
  /** Slack's handshake challenge to echo, when the request is one (see slack-handshake.ts). */
  challenge: string | undefined = undefined;

  constructor(
    /** The HTTP request; absent for the panel's test event (no method, limits, token or wait). */
    readonly http: HookRequest | undefined,
    readonly headers: IncomingHttpHeaders,
    readonly senderIp: string | undefined,
  ) {}

  static of(hook: HookRequest, trace?: EventTrace): Intake {
    const intake = new Intake(hook, hook.req.headers, hook.senderIp);
    intake.trace = trace;
    return intake;
  }

  /**
   * The panel's "send test event": sent by a signed-in admin, so neither the sender's address
   * nor a signature is asked of it; every other check applies.
   */
  static testEvent(channel: ReceivingChannel, body: Buffer, bodyLimitBytes: number): Intake {
    const intake = new Intake(undefined, { 'content-type': 'application/json' }, undefined);
    intake.channel = channel;
    intake.received = limitBody(body, bodyLimitBytes);
    intake.storeBy = Date.now() + HOOK_DEADLINES.storeMs;
    return intake;
  }

  /**
   * What the writer stores: the event, or the refusal. The payload's tree (or paths) is let go here, before
   * the request waits for its batch: kept across that wait it would outlive young-generation
   * collections and be copied by each.
   */
  storedRequest(refusal: Refusal | undefined): IncomingEvent {
    const { channel, tree } = this;
    this.tree = undefined;
    this.paths = undefined;
    const headers = keptHeaders(this.headers, secretHeader(channel));
    const senderIp = senderAddress(this.senderIp);
    const { trace } = this;
    if (refusal) {
      const { text, truncated } = keptBody(refusal.kept, refusal.of);
      const code = refusal.error.code;
      return {
        channel,
        headers,
        senderIp,
        payload: text,
        payloadTruncated: truncated,
        refusal: code,
        trace,
        refusalDetail: refusal.error.detail,
      };
    }
    return {
      channel,
      headers,
      senderIp,
      payload: this.text,
      dedupKey: this.dedupKey,
      bodyHash: this.bodyHash,
      filteredBy: this.filteredBy,
      threadKey: tree ? renderThreadKey(channel.thread_key_template, tree) : null,
      trace,
    };
  }
}

/** A refusal keeping `kept`, the start of a body of `of` bytes. */
export function refused(error: AppError, kept: Buffer, of = kept.length): Refusal {
  return { error, kept, of };
}

/** A refusal keeping the body as it arrived (of a body past the limit, its start). */
export function asReceived({ received }: Intake, error: AppError): Refusal {
  return received.tooLarge
    ? refused(error, received.head, received.received)
    : refused(error, received.bytes);
}

/** The header that carries the channel's secret itself, which events must not keep. */
function secretHeader(channel: ReceivingChannel): string | undefined {
  return channel.verification.scheme === 'header-secret' ? channel.verification.header : undefined;
}

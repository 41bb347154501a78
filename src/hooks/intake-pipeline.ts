import type { ServerResponse } from 'node:http';
import { WEBHOOK_TOKEN_SHAPE } from '../channels/webhook-token.js';
import { AppError } from '../platform/errors.js';
import {
  InvalidJsonError,
  checkPayload,
  isJsonObject,
  parsePayload,
  type JsonValue,
} from '../template/index.js';
import { allowOriginFor, setCorsHeaders, takesBrowserSenders } from './browser-origins.js';
import { LARGE_BODY_BYTES } from './body-turns.js';
import { decodeBody } from './decode-body.js';
import { dedupKey, keyedBodyHash } from './dedup.js';
import { HOOK_DEADLINES } from './hook-deadlines.js';
import { hookErrors } from './hook-errors.js';
import type { ReceivingChannel } from './ingest-repo.js';
import {
  asReceived,
  refused,
  type IngestOutcome,
  type Intake,
  type IntakeParts,
  type Refusal,
} from './intake.js';
import { senderKey } from './rate-limits.js';
import { isFormWithPayload, isJsonMediaType } from './media-type.js';
import { readBody } from './read-body.js';
import { REJECTED_BODY_BYTES } from './rejected-body.js';
import { headerValue } from './request-headers.js';
import { requestedWait } from './requested-wait.js';
import { isSenderAllowed } from './verify/allowed-ips.js';
import { verifyRequest } from './verify/schemes.js';
import { SignatureFailure } from './verify/signature-checks.js';
import { findSlackChallenge } from './verify/slack-handshake.js';

/**
 * The receiver's checks, in the order senders rely on: the first that fails answers. A step
 * returns a refusal to record (a `rejected` event), throws one answered without a trace (405,
 * 429, 404, 408, 503), or returns nothing. Then `write` hands the event, or the refusal, to the
 * one writer, whose statement decides the rest: duplicate (200, or 422), filtered (200: the mark
 * `accept_when` left), quota (403), budget (403), stored (200).
 */
export const STEPS: readonly Step[] = [
  { name: 'method', run: methodIsPost }, // 405
  { name: 'sender rate limit', run: limitSender }, // 429
  { name: 'token', run: findChannel }, // 404
  { name: 'origin', run: checkOrigin }, // 403 origin_not_allowed
  { name: 'channel rate limit', run: limitChannel }, // 429
  { name: 'body', run: readTheBody }, // 408
  { name: 'wait', run: checkWait }, // 400 invalid_wait
  { name: 'disabled', run: checkEnabled }, // 403 channel_disabled
  { name: 'sender address', run: checkSenderAddress }, // 403 sender_not_allowed
  { name: 'size', run: checkSize }, // 413
  { name: 'encoding', run: decode }, // 415, 400 invalid_encoding, 413 decoded, 503 busy
  { name: 'turn', run: waitForTurn }, // a large body's checks wait for their turn of the loop
  { name: 'signature', run: checkSignature }, // 401
  { name: 'media type', run: checkMediaType }, // 415
  { name: 'JSON', run: checkJson }, // 400 invalid_json
  { name: 'object', run: checkObject }, // 400 payload_not_object
  { name: 'slack handshake', run: findSlackChallenge }, // 200 {challenge}, nothing stored
  { name: 'duplicate', run: findDedupKey }, // the key the statement finds duplicates by
  { name: 'accept_when', run: checkAcceptWhen }, // 200 filtered, honoured after the duplicate
];

interface Step {
  name: string;
  /** Sync where it can be: an await per step would cost every webhook a turn of the loop each. */
  run(intake: Intake, parts: IntakeParts): Refusal | void | Promise<Refusal | void>;
}

/** Runs the steps, then writes what they decided. */
export async function receive(intake: Intake, parts: IntakeParts): Promise<IngestOutcome> {
  try {
    let outcome = await runFrom(0, intake, parts);
    while (outcome === CHANNEL_CHANGED) {
      // Checked against a row that has changed since: checked again, from the channel on.
      const channel = await parts.findChannelAgain(
        intake.channel.webhook_token_hash,
        intake.storeBy,
      );
      if (!channel) throw hookErrors.channelNotFound();
      intake.channel = channel;
      outcome = await runFrom(FROM_DISABLED, intake, parts);
    }
    return outcome;
  } catch (error) {
    if (error instanceof AppError) return { accepted: false, error };
    throw error;
  }
}

const CHANNEL_CHANGED = Symbol('channel changed');
const FROM_DISABLED = STEPS.findIndex((step) => step.name === 'disabled');

async function runFrom(
  first: number,
  intake: Intake,
  parts: IntakeParts,
): Promise<IngestOutcome | typeof CHANNEL_CHANGED> {
  for (let i = first; i < STEPS.length; i++) {
    const checked = (STEPS[i] as Step).run(intake, parts);
    const refusal = checked instanceof Promise ? await checked : checked;
    if (refusal) return write(intake, parts, refusal);
  }
  if (intake.challenge !== undefined) return { accepted: true, challenge: intake.challenge };
  return write(intake, parts);
}

/** Hands the event, or the refusal to record, to the one writer, and reads its verdict. */
async function write(
  intake: Intake,
  parts: IntakeParts,
  refusal?: Refusal,
): Promise<IngestOutcome | typeof CHANNEL_CHANGED> {
  const stored = await parts.store(intake.storedRequest(refusal), intake.storeBy);
  switch (stored.outcome) {
    case 'accepted':
      return { accepted: true, eventId: stored.eventId };
    case 'filtered':
      return { accepted: true, eventId: stored.eventId, filtered: true };
    case 'duplicate':
      return { accepted: true, eventId: stored.first.id, duplicate: stored.first };
    case 'rejected':
      return { accepted: false, eventId: stored.eventId, error: (refusal as Refusal).error };
    case 'key_reused': {
      const error = hookErrors.idempotencyKeyReused(stored.firstId);
      return { accepted: false, eventId: stored.eventId, error };
    }
    case 'quota_exceeded':
      return {
        accepted: false,
        eventId: stored.eventId,
        error: hookErrors.quotaExceeded(stored.quota),
      };
    case 'budget_exceeded':
      return {
        accepted: false,
        eventId: stored.eventId,
        error: hookErrors.budgetExceeded(stored.budget),
      };
    case 'channel_changed':
      return CHANNEL_CHANGED;
  }
}

function methodIsPost({ http }: Intake): void {
  if (http && http.req.method !== 'POST') throw hookErrors.methodNotAllowed();
}

function limitSender({ http }: Intake, parts: IntakeParts): Promise<void> | void {
  if (http) return limitSenderOf(parts, http.senderIp, http.res);
}

/** Counts a request against its sender's limit; throws the 429 past it. */
export async function limitSenderOf(
  parts: Pick<IntakeParts, 'limits'>,
  senderIp: string | undefined,
  res: ServerResponse,
): Promise<void> {
  const refusal = await parts.limits.perSender.hit(senderKey(senderIp), res);
  if (refusal) throw refusal;
}

async function findChannel(intake: Intake, parts: IntakeParts): Promise<void> {
  if (intake.http) intake.channel = await channelOf(parts, intake.http.token, intake.receivedAt);
}

/**
 * The channel of a webhook URL's token; throws 404 when there is none.
 * @param receivedAt when the request arrived: the lookup ends HOOK_DEADLINES.lookupMs after it
 */
export async function channelOf(
  parts: Pick<IntakeParts, 'findChannel'>,
  token: string,
  receivedAt: number,
): Promise<ReceivingChannel> {
  const channel = WEBHOOK_TOKEN_SHAPE.test(token)
    ? await parts.findChannel(token, receivedAt + HOOK_DEADLINES.lookupMs)
    : undefined;
  if (!channel) throw hookErrors.channelNotFound();
  return channel;
}

/**
 * A request from a web page (it carries `Origin`) to a channel that takes browser senders: from a
 * listed origin every answer carries the CORS headers; from another it is refused and recorded,
 * before the channel's rate limit counts it.
 */
function checkOrigin(intake: Intake, parts: IntakeParts): Promise<Refusal> | void {
  const { http, channel } = intake;
  // Most channels take no browser senders: their webhooks skip the header look-up.
  if (!http || !takesBrowserSenders(channel)) return;
  const origin = headerValue(intake.headers, 'origin');
  if (origin === undefined) return;
  const allowOrigin = allowOriginFor(channel, origin);
  if (allowOrigin !== undefined) return setCorsHeaders(http.res, allowOrigin);
  return readTheBody(intake, parts).then(() =>
    asReceived(intake, hookErrors.originNotAllowed(origin)),
  );
}

async function limitChannel({ http, channel }: Intake, parts: IntakeParts): Promise<void> {
  if (!http) return;
  const refusal = await parts.limits.perChannel.hit(channel.webhook_token_hash, http.res);
  if (refusal) throw refusal;
}

async function readTheBody(intake: Intake, parts: IntakeParts): Promise<void> {
  if (!intake.http) return;
  const deadline = intake.receivedAt + parts.bodyTimeoutMs;
  intake.received = await readBody(intake.http.req, parts.bodyLimitBytes, deadline);
  intake.storeBy = Date.now() + HOOK_DEADLINES.storeMs;
}

function checkWait(intake: Intake, parts: IntakeParts): Refusal | void {
  if (!intake.http) return;
  const wait = requestedWait(
    { headers: intake.headers, query: intake.http.query },
    parts.syncWaitMaxS,
  );
  if (wait instanceof AppError) return asReceived(intake, wait);
  intake.waitMs = wait.ms;
  intake.preferenceApplied = wait.preferenceApplied;
}

function checkEnabled(intake: Intake): Refusal | void {
  if (!intake.channel.enabled) return asReceived(intake, hookErrors.channelDisabled());
}

function checkSenderAddress(intake: Intake): Refusal | void {
  if (intake.http && !isSenderAllowed(intake.channel.allowed_ips, intake.senderIp))
    return asReceived(intake, hookErrors.senderNotAllowed());
}

function checkSize(intake: Intake, parts: IntakeParts): Refusal | void {
  const { received } = intake;
  if (received.tooLarge)
    return asReceived(intake, hookErrors.payloadTooLarge(parts.bodyLimitBytes));
  intake.body = received.bytes;
}

/**
 * Undoes Content-Encoding with the body limit on the decoded bytes. A body that the decoders'
 * budget has no room for now is a 503, not recorded: no 503 is followed by a stored event.
 */
function decode(intake: Intake, parts: IntakeParts): Promise<Refusal | void> | void {
  const encoding = headerValue(intake.headers, 'content-encoding');
  if (encoding !== undefined) return decodeWith(encoding, intake, parts);
}

async function decodeWith(
  encoding: string,
  intake: Intake,
  parts: IntakeParts,
): Promise<Refusal | void> {
  const { bodyLimitBytes, decodeBudget } = parts;
  const raw = intake.body;
  const decoded = await decodeBody(
    raw,
    encoding,
    bodyLimitBytes,
    REJECTED_BODY_BYTES,
    decodeBudget,
  );
  if (decoded.ok) {
    intake.body = decoded.bytes;
    return;
  }
  switch (decoded.problem) {
    case 'too_large':
      // Decoding stopped past the limit: what was decoded is only the start of the body.
      return refused(hookErrors.payloadTooLarge(bodyLimitBytes, encoding), decoded.head, Infinity);
    case 'unsupported':
      return refused(hookErrors.unsupportedEncoding(decoded.encoding), raw);
    case 'too_many':
      return refused(hookErrors.tooManyEncodings(decoded.count), raw);
    case 'invalid':
      return refused(hookErrors.invalidEncoding(decoded.encoding), raw);
    case 'busy':
      throw hookErrors.decodersBusy();
  }
}

/**
 * The checks from here to the writer are synchronous and, for a large body, long: such a body
 * waits for a turn of the event loop of its own (see body-turns.ts), so that `/healthz` and the
 * other requests ready meanwhile are not held behind several of them.
 */
function waitForTurn(intake: Intake, parts: IntakeParts): Promise<void> | void {
  if (intake.body.length >= LARGE_BODY_BYTES) return parts.bodyTurns.next();
}

function checkSignature(intake: Intake): Refusal | void {
  if (!intake.http) return;
  const { body, headers, channel } = intake;
  try {
    verifyRequest(
      { body, header: (name) => headerValue(headers, name) },
      channel.verification,
      channel.verification_secret,
    );
  } catch (error) {
    if (!(error instanceof SignatureFailure)) throw error;
    return refused(hookErrors.signatureInvalid(error.message), body);
  }
}

function checkMediaType({ headers, body }: Intake): Refusal | void {
  const mediaType = headers['content-type'];
  if (isJsonMediaType(mediaType)) return;
  const error = isFormWithPayload(mediaType, body)
    ? hookErrors.formPayload()
    : hookErrors.unsupportedMediaType(mediaType ?? '');
  return refused(error, body);
}

// ignoreBOM: a byte-order mark stays in the payload, which is kept byte for byte.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Builds the payload's tree only when a thread key or a payload dedup key renders from it;
 * `accept_when` alone reads only its paths from the text; otherwise the text is only checked.
 */
function checkJson(intake: Intake): Refusal | void {
  const { channel, body } = intake;
  try {
    const text = utf8.decode(body);
    if (channel.thread_key_template || channel.dedup.mode === 'payload') {
      intake.tree = parsePayload(text);
      intake.isObject = isJsonObject(intake.tree);
    } else if (channel.accepts) {
      intake.paths = channel.accepts.readPayload(text);
      intake.isObject = intake.paths.isObject;
    } else {
      intake.isObject = checkPayload(text).isObject;
    }
    intake.text = text;
  } catch (error) {
    if (isBlank(body)) return refused(hookErrors.emptyBody(), body);
    const reason = error instanceof InvalidJsonError ? error.message : 'it is not valid UTF-8 text';
    return refused(hookErrors.invalidJson(reason), body);
  }
}

/** No bytes, or only JSON's white space: the parser's "end of input" would say little. */
function isBlank(body: Buffer): boolean {
  return body.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d);
}

function checkObject(intake: Intake): Refusal | void {
  if (!intake.isObject) return refused(hookErrors.payloadNotObject(), intake.body);
}

/**
 * Marks a payload the channel's `accept_when` does not accept: decided by the request, but after
 * the duplicate, so the statement honours the mark once it has found none.
 */
function checkAcceptWhen(intake: Intake): void {
  const { accepts } = intake.channel;
  if (!accepts) return;
  intake.filteredBy = accepts.failing({ payload: intake.tree ?? intake.paths });
  intake.paths = undefined;
}

function findDedupKey(intake: Intake): void {
  const { dedup } = intake.channel;
  intake.dedupKey = dedupKey(dedup, intake.headers, () => intake.tree as JsonValue);
  if (intake.dedupKey !== undefined) intake.bodyHash = keyedBodyHash(dedup, intake.body);
}

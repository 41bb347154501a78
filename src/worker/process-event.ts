import { AiError } from '../ai/ai-provider.js';
import { ToolboxUnavailable, type Toolbox } from '../tools/toolbox.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics, ReplyOutcome } from '../metrics/metrics.js';
import { priceUnknown, settleSpend } from '../spend/budget-gate.js';
import type { SpentCall } from '../spend/spend-ledger.js';
import { attemptRecord, type AiCallRecord } from './ai-call.js';
import { countCalls } from './call-metrics.js';
import {
  askAttempt,
  prepareRequest,
  pricedTargets,
  type AskedAttempt,
  type ParkedAttempt,
  type ReadyRequest,
  type RequestDeps,
} from './event-request.js';
import { parkConversation, takeUpConversation } from './parked-conversation.js';
import { parkEvent } from './queue-park.js';
import type { ClaimedEvent } from './queue-claim.js';
import type { FinalOutcome, Finish } from './queue-finish.js';
import { releaseEvent } from './queue-release.js';
import { recordToolRound } from './queue-tool-round.js';
import { retryEvent } from './queue-retry.js';
import { OVER_BUDGET, type Start } from './queue-start-attempt.js';
import { storableRejectedReply, storableText } from './storable-text.js';
import { findCachedReply, type Served } from './queue-reply-cache.js';
import { replyCacheHash, servedReply, unrestoredReply } from './reply-cache.js';
import { keptToolCalls, type ToolCallRecord } from './tool-rounds.js';
import type { ChatParent } from '../tracing/tracing.js';
import { saveAttachments } from './queue-attachments.js';
import {
  attachmentFailureMessage,
  fetchAttachments,
  type FetchedAttachments,
} from '../attachments/event-attachments.js';

export interface ProcessDeps extends RequestDeps {
  log: Logger;
  metrics: Metrics;
  workerId: string;
  leaseMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** Told when a retried event is due again, so the worker can wake for it on time. */
  onRetryScheduled?: (dueInMs: number) => void;
  /**
   * Records that a call is about to be made (`startAttempts`, gathered with the other events of
   * its claim): the new attempt count, or undefined when the lease was lost.
   */
  recordStarted: (start: Start) => Promise<number | typeof OVER_BUDGET | undefined>;
  /** Ends the event (`finishEvents`, gathered with others that end meanwhile); false when the lease was lost. */
  recordFinished: (finish: Finish) => Promise<boolean>;
  /** Records one call's spend (SpendLedger.recordSpend). */
  recordSpend: (call: SpentCall) => Promise<void>;
  /** Ends the event with a reply from the cache (`serveFromCache`, gathered); false when the lease was lost. */
  recordServed: (served: Served) => Promise<boolean>;
  /** APPROVAL_TIMEOUT_S: how long a call waits for an operator's decision. */
  approvalTimeoutS: number;
}

/**
 * What became of a claimed event; `lost` means another worker had taken it over, `parked` that
 * it waits for an operator's approval of a tool call (out of the queue).
 */
export type ProcessOutcome = ReplyOutcome | 'released' | 'lost' | 'parked';

/**
 * Answers one claimed event: renders the channel's template (and system prompt) with the
 * payload, adds the thread's history, asks the AI with the channel's settings, checks the
 * reply's shape, and stores the result. `signal` aborts the AI call when the worker shuts down; the event is then
 * given back to the queue. `callEnded` is called (perhaps more than once) when the AI call is
 * over or will not be made, before the result is stored. `chatParent` is the attempt's
 * `event process` span, which its AI calls' spans belong to (src/tracing/). Database errors are thrown: the event
 * keeps its lease and is taken again once it ends.
 */
export async function processEvent(
  deps: ProcessDeps,
  event: ClaimedEvent,
  signal: AbortSignal,
  callEnded: () => void = () => undefined,
  chatParent?: ChatParent,
): Promise<ProcessOutcome> {
  const { db, log, workerId } = deps;
  const eventId = event.id;
  const finish = async (outcome: FinalOutcome, call?: AiCallRecord): Promise<ProcessOutcome> => {
    callEnded();
    if (!(await deps.recordFinished({ eventId, outcome, call }))) return lost(deps, eventId);
    deps.metrics.replies.inc({ outcome: outcome.status });
    return outcome.status;
  };

  if (event.attempts >= deps.maxAttempts) {
    // Its last allowed call was cut short (the worker holding it died): give up, as a retry would.
    log.warn({ eventId, attempts: event.attempts }, 'event failed: no attempts left');
    return finish({
      status: 'failed',
      error:
        event.error ??
        `No reply after ${event.attempts} attempts: the last AI call was interrupted.`,
    });
  }

  // A conversation an approval stopped goes on as it was: nothing is rendered or drawn again.
  const parked = event.conversation;
  const prepared = parked ? takeUpConversation(parked) : await prepareRequest(deps, event);
  if (prepared.kind === 'unreadable') {
    // Accepted events were parsed on arrival, so this means the stored payload was altered.
    log.error({ eventId, error: prepared.error }, 'event failed: stored payload unreadable');
    return finish({ status: 'failed', error: prepared.error });
  }
  if (prepared.kind === 'skipped') {
    log.info({ eventId }, 'event skipped: the prompt is empty');
    return finish({ status: 'skipped', prompt: prepared.prompt, missing: prepared.missing });
  }
  const { request, settings, guard, missing, inputTruncated } = prepared;
  // The prompt stored is the one sent.
  const { prompt } = request;

  // Resolved before the attempt is counted: a database error here leaves the event untouched.
  const targets = await pricedTargets(deps, event.workspace_id, settings);
  const first = targets[0] as (typeof targets)[number];
  // The reply cache (src/reply-cache/): a request without images is looked up here, before a
  // price or budget check could refuse it; one with images once they are fetched below, as
  // fetching is part of the attempt. A conversation taken up after an approval called tools.
  const cacheOn = settings.reply_cache_s > 0 && !parked;
  if (cacheOn && !prepared.images.length) {
    const hash = replyCacheHash(prepared, first);
    const served = await replyFromCache(deps, event, prepared, hash, callEnded);
    if (served) return served;
  }
  const unpriced = event.budgeted ? priceUnknown(targets) : undefined;
  if (unpriced !== undefined) {
    log.warn({ eventId, error: unpriced }, 'event failed: its model has no known price');
    return finish({ status: 'failed', error: unpriced, prompt });
  }
  const attempts = await deps.recordStarted({
    eventId,
    prompt,
    missing,
    provider: first.provider,
    model: first.model ?? null,
    inputTruncated,
    redactions: guard?.redactions(),
    redactionValues: guard?.sentValues(),
    resumed: parked !== null,
  });
  if (attempts === undefined) return lost(deps, eventId);
  if (attempts === OVER_BUDGET) {
    log.info({ eventId }, 'event waits: its workspace has spent its AI budget for the month');
    return 'released';
  }

  let ready = prepared;
  if (prepared.images.length && deps.imageFetcher) {
    let fetched: FetchedAttachments;
    try {
      fetched = await fetchAttachments(deps.imageFetcher, prepared.images, signal);
    } catch (error) {
      callEnded();
      if (!signal.aborted) throw error;
      log.info({ eventId }, 'event released: shutting down');
      return (await releaseEvent(db, eventId, workerId)) ? 'released' : lost(deps, eventId);
    }
    if (!(await saveAttachments(db, eventId, workerId, fetched.attachments)))
      return lost(deps, eventId);
    const { failure } = fetched;
    if (failure?.permanent) {
      const error = attachmentFailureMessage(failure);
      log.warn({ eventId, error }, 'event failed: an image could not be sent');
      return finish({ status: 'failed', error });
    }
    if (failure) {
      callEnded();
      const passing = new AiError(attachmentFailureMessage(failure), true);
      return failedCall(deps, event, attempts, passing, undefined, finish);
    }
    ready = { ...prepared, request: { ...prepared.request, images: fetched.images } };
  }
  const requestHash = cacheOn ? replyCacheHash(ready, first) : undefined;
  if (requestHash !== undefined && prepared.images.length) {
    // The second place (see above). A hit after the attempt was counted: the served event's
    // attempts read 0 all the same.
    const served = await replyFromCache(deps, event, ready, requestHash, callEnded);
    if (served) return served;
  }

  let toolbox: Toolbox | undefined;
  if (settings.tools.length && deps.openToolbox) {
    try {
      toolbox = await deps.openToolbox(event.workspace_id, settings.tools);
    } catch (error) {
      if (!(error instanceof ToolboxUnavailable)) throw error;
      callEnded();
      return failedCall(deps, event, attempts, new AiError(error.message, true), undefined, finish);
    }
  }
  let asked: AskedAttempt;
  try {
    const tools = toolbox && {
      toolbox,
      guard,
      eventId,
      trial: false,
      metrics: deps.metrics,
      maxRounds: settings.max_tool_rounds,
      decisions: event.approval_decisions,
      onRound: (state: { toolCalls: ToolCallRecord[] }) =>
        recordToolRound(db, workerId, deps.leaseMs, {
          eventId,
          toolCalls: keptToolCalls(state.toolCalls),
          redactions: guard?.redactions() ?? null,
          redactionValues: guard?.sentValues() ?? null,
        }),
    };
    asked = await askAttempt(ready, targets, signal, chatParent, tools, parked?.state);
  } catch (error) {
    callEnded();
    if (!signal.aborted) throw error;
    log.info({ eventId }, 'event released: shutting down');
    return (await releaseEvent(db, eventId, workerId)) ? 'released' : lost(deps, eventId);
  } finally {
    await toolbox?.close();
  }
  const calls = asked.kind === 'answered' ? asked.result.calls : asked.calls;
  await settleSpend(deps.recordSpend, log, { ...event, eventId }, calls);
  callEnded();
  await countCalls(deps.metrics, event.workspace_id, calls);
  if (asked.kind === 'lost') return lost(deps, eventId);
  if (asked.kind === 'parked') return park(deps, eventId, prepared, asked);
  const { result } = asked;
  const call = attemptRecord(result);
  if (!result.ok) return failedCall(deps, event, attempts, result.error, call, finish);

  const reply = asked.reply ?? '';
  // A reply whose rounds called a tool is never left in the cache (finishEvents checks too).
  const cache =
    requestHash !== undefined && asked.toolCalls.length === 0
      ? { requestHash, replyUnrestored: unrestoredReply(result.reply.text, reply) }
      : undefined;
  const outcome = await finish({ status: 'replied', reply, cache }, call);
  if (outcome === 'replied') log.info({ eventId, attempts }, 'event replied');
  return outcome;
}

/**
 * Replies from the channel's cache when it holds a reply to the same request (counted a hit),
 * else counts a miss and resolves to undefined: the event is then asked as always.
 */
async function replyFromCache(
  deps: ProcessDeps,
  event: ClaimedEvent,
  prepared: ReadyRequest,
  requestHash: string,
  callEnded: () => void,
): Promise<ProcessOutcome | undefined> {
  const { settings, guard } = prepared;
  const cached = await findCachedReply(
    deps.db,
    event.channel_id,
    requestHash,
    settings.reply_cache_s,
  );
  if (!cached) {
    deps.metrics.replyCache.inc({ outcome: 'miss' });
    return undefined;
  }
  callEnded();
  const served = await deps.recordServed({
    eventId: event.id,
    cachedFrom: cached.id,
    reply: servedReply(prepared, cached),
    prompt: prepared.request.prompt,
    missing: prepared.missing,
    provider: cached.provider,
    model: cached.model,
    inputTruncated: prepared.inputTruncated,
    redactions: guard?.redactions() ?? null,
    redactionValues: guard?.sentValues() ?? null,
  });
  if (!served) return lost(deps, event.id);
  deps.metrics.replyCache.inc({ outcome: 'hit' });
  deps.metrics.replies.inc({ outcome: 'replied' });
  deps.log.info({ eventId: event.id, cachedFrom: cached.id }, 'event replied from the reply cache');
  return 'replied';
}

/**
 * A call that gave no usable reply: retried later while it may help and attempts are left. A
 * reply refused as `reply_invalid` is kept either way, for Brain Logs to show (already restored:
 * the check saw the reply as a kept reply is stored).
 */
async function failedCall(
  deps: ProcessDeps,
  event: ClaimedEvent,
  attempts: number,
  aiError: AiError,
  call: AiCallRecord | undefined,
  finish: (outcome: FinalOutcome, call?: AiCallRecord) => Promise<ProcessOutcome>,
): Promise<ProcessOutcome> {
  const { db, log, workerId } = deps;
  const eventId = event.id;
  const message = storableText(aiError.message);
  const rejectedReply =
    aiError.rejectedReply === undefined ? null : storableRejectedReply(aiError.rejectedReply);
  if (aiError.retryable && attempts < deps.maxAttempts) {
    log.warn({ eventId, attempts, error: message }, 'AI call failed; retrying later');
    const dueInMs = await retryEvent(
      db,
      eventId,
      workerId,
      { error: message, rejectedReply },
      deps.retryBaseMs,
      aiError.retryAfterMs ?? 0,
      call,
    );
    if (dueInMs === undefined) return lost(deps, eventId);
    deps.metrics.replies.inc({ outcome: 'retried' });
    deps.onRetryScheduled?.(dueInMs);
    return 'retried';
  }
  const final = aiError.retryable ? `${message} Gave up after ${attempts} attempts.` : message;
  log.warn({ eventId, attempts, error: final }, 'event failed');
  return finish({ status: 'failed', error: final, rejectedReply }, call);
}

/**
 * Stores the conversation of an attempt stopped at a tool call that needs an operator's
 * approval, and leaves the event out of the queue until a decision (or the timeout) puts it back.
 */
async function park(
  deps: ProcessDeps,
  eventId: string,
  ready: ReadyRequest,
  asked: ParkedAttempt,
): Promise<ProcessOutcome> {
  const { guard } = ready;
  const parkedOk = await parkEvent(deps.db, deps.workerId, {
    eventId,
    waiting: asked.waiting,
    conversation: parkConversation(ready, asked.state),
    toolCalls: asked.toolCalls,
    call: asked.last ? attemptRecord({ ...asked.last, calls: asked.calls }) : undefined,
    redactions: guard?.redactions() ?? null,
    redactionValues: guard?.sentValues() ?? null,
    timeoutS: deps.approvalTimeoutS,
  });
  if (!parkedOk) return lost(deps, eventId);
  deps.log.info({ eventId, tool: asked.waiting.tool }, 'event waits for an approval');
  return 'parked';
}

function lost(deps: ProcessDeps, eventId: string): ProcessOutcome {
  deps.log.warn(
    { eventId },
    'event was taken over by another worker after its lease ran out; result dropped',
  );
  return 'lost';
}

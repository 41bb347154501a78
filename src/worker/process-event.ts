import { AiError, type AiProvider, type AiRequest } from '../ai/ai-provider.js';
import { asksForJson, toAiSettings, type AiSettings } from '../ai/ai-settings.js';
import type { Prices } from '../ai/call-cost.js';
import { runWithFallbacks, type CallTarget, type FallbackResult } from '../ai/fallback-runner.js';
import { fitToInputLimit } from '../ai/input-limit.js';
import type { Queryable } from '../db/database.js';
import { EventGuard } from '../guardrails/event-guard.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics, ReplyOutcome } from '../metrics/metrics.js';
import type { SpentCall } from '../spend/spend-ledger.js';
import { missingInTemplates, parsePayload, renderTemplate } from '../template/index.js';
import { attemptRecord, type AiCallRecord } from './ai-call.js';
import { spendOnCalls } from './call-spend.js';
import { countCalls } from './call-metrics.js';
import { callTargets, checkReply, type WorkspaceProviders } from '../ai/call-targets.js';
import type { ClaimedEvent } from './queue-claim.js';
import type { FinalOutcome, Finish } from './queue-finish.js';
import { threadHistory, type ThreadTurn } from './queue-history.js';
import { releaseEvent } from './queue-release.js';
import { retryEvent } from './queue-retry.js';
import { OVER_BUDGET, type Start } from './queue-start-attempt.js';
import { storableText } from './storable-text.js';
import type { ChatParent } from '../tracing/tracing.js';

export interface ProcessDeps {
  db: Queryable;
  /** The built-in provider `default`: the server's AI_* configuration. */
  provider: AiProvider;
  /** A workspace's own providers by name; absent, channels can ask only `default`. */
  providers?: WorkspaceProviders;
  log: Logger;
  metrics: Metrics;
  workerId: string;
  leaseMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** AI_MAX_INPUT_CHARS: what one call sends (system prompt, history, prompt) is cut to it. */
  maxInputChars: number;
  /** AI_MODEL: the model recorded for channels that name none (null with the echo and no model). */
  defaultModel?: string;
  /** Told when a retried event is due again, so the worker can wake for it on time. */
  onRetryScheduled?: (dueInMs: number) => void;
  /**
   * Records that a call is about to be made (`startAttempts`, gathered with the other events of
   * its claim): the new attempt count, or undefined when the lease was lost.
   */
  recordStarted: (start: Start) => Promise<number | typeof OVER_BUDGET | undefined>;
  /** Ends the event (`finishEvents`, gathered with others that end meanwhile); false when the lease was lost. */
  recordFinished: (finish: Finish) => Promise<boolean>;
  /** How a workspace's calls through a provider of a kind are priced (PricesService.pricesFor). */
  pricesFor: (workspaceId: string, kind: string) => Promise<Prices>;
  /** Records one call's spend (SpendLedger.recordSpend). */
  recordSpend: (call: SpentCall) => Promise<void>;
}

/** What became of a claimed event; `lost` means another worker had taken it over. */
export type ProcessOutcome = ReplyOutcome | 'released' | 'lost';

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

  const settings = toAiSettings(event.ai);
  // Guardrails (src/guardrails/): values rendered between data tags, then what is sent redacted.
  const guard = EventGuard.of(settings);
  let request: AiRequest;
  let missing: string[];
  try {
    const payload = parsePayload(event.payload);
    const system = settings.system_prompt ?? '';
    const wrap = guard?.wrapValue;
    request = {
      prompt: storableText(renderTemplate(event.template, payload, wrap)),
      system: system ? storableText(renderTemplate(system, payload, wrap)) : undefined,
      history: [],
      model: settings.model ?? undefined,
      temperature: settings.temperature ?? undefined,
      maxTokens: settings.max_tokens ?? undefined,
      responseFormat: settings.response_format ?? undefined,
    };
    missing = missingInTemplates([event.template, system], payload);
  } catch (error) {
    // Accepted events were parsed on arrival, so this means the stored payload was altered.
    log.error({ eventId, err: error }, 'event failed: stored payload unreadable');
    return finish({
      status: 'failed',
      error: storableText(`The stored payload is not valid JSON: ${messageOf(error)}`),
    });
  }
  if ((guard ? guard.unwrapped(request.prompt) : request.prompt).trim() === '') {
    log.info({ eventId }, 'event skipped: the prompt is empty');
    return finish({ status: 'skipped', prompt: request.prompt, missing });
  }

  let droppedTurns = 0;
  let thread: ThreadTurn[] = [];
  if (event.thread_key !== null && (settings.history ?? 0) > 0) {
    const room = deps.maxInputChars - (request.system?.length ?? 0) - request.prompt.length;
    const history = await threadHistory(
      db,
      event.channel_id,
      event.thread_key,
      eventId,
      settings.history ?? 0,
      room,
    );
    request.history = thread = history.turns;
    droppedTurns = history.dropped;
  }
  if (guard) request = guard.guard(request, thread);
  const fitted = fitToInputLimit(request, deps.maxInputChars);
  request = fitted.request;
  const inputTruncated = fitted.truncated || droppedTurns > 0;
  // The prompt stored is the one sent.
  const { prompt } = request;

  // Resolved before the attempt is counted: a database error here leaves the event untouched.
  const targets = await pricedTargets(deps, event.workspace_id, settings);
  const first = targets[0] as (typeof targets)[number];
  const attempts = await deps.recordStarted({
    eventId,
    prompt,
    missing,
    provider: first.provider,
    model: first.model ?? null,
    inputTruncated,
    redactions: guard?.redactions(),
    redactionValues: guard?.sentValues(),
  });
  if (attempts === undefined) return lost(deps, eventId);
  if (attempts === OVER_BUDGET) {
    log.info({ eventId }, 'event waits: its workspace has spent its AI budget for the month');
    return 'released';
  }

  // The reply as the channel gets it: placeholders put back when the channel asks for it.
  const restored = (text: string) =>
    guard ? guard.restore(text, asksForJson(request.responseFormat)) : text;
  let result: FallbackResult;
  try {
    result = await runWithFallbacks(
      targets,
      request,
      signal,
      (reply, target) =>
        checkReply({ ...reply, text: restored(reply.text) }, target, request.responseFormat),
      chatParent,
    );
  } catch (error) {
    callEnded();
    if (!signal.aborted) throw error;
    log.info({ eventId }, 'event released: shutting down');
    return (await releaseEvent(db, eventId, workerId)) ? 'released' : lost(deps, eventId);
  }
  await spendOnCalls(deps.recordSpend, log, event, result.calls);
  callEnded();
  countCalls(deps.metrics, result.calls);
  const call = attemptRecord(result);
  if (!result.ok) return failedCall(deps, event, attempts, result.error, call, finish);

  const text = restored(result.reply.text);
  const outcome = await finish({ status: 'replied', reply: storableText(text) }, call);
  if (outcome === 'replied') log.info({ eventId, attempts }, 'event replied');
  return outcome;
}

/** A call that gave no usable reply: retried later while it may help and attempts are left. */
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
  if (aiError.retryable && attempts < deps.maxAttempts) {
    log.warn({ eventId, attempts, error: message }, 'AI call failed; retrying later');
    const dueInMs = await retryEvent(
      db,
      eventId,
      workerId,
      message,
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
  return finish({ status: 'failed', error: final }, call);
}

/** The attempt's providers in order, each with how the workspace's calls through it are priced. */
async function pricedTargets(
  deps: ProcessDeps,
  workspaceId: string,
  settings: AiSettings,
): Promise<CallTarget[]> {
  const targets = await callTargets(deps, workspaceId, settings);
  return Promise.all(
    targets.map(async (target) =>
      target.instance
        ? { ...target, prices: await deps.pricesFor(workspaceId, target.instance.name) }
        : target,
    ),
  );
}

function lost(deps: ProcessDeps, eventId: string): ProcessOutcome {
  deps.log.warn(
    { eventId },
    'event was taken over by another worker after its lease ran out; result dropped',
  );
  return 'lost';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

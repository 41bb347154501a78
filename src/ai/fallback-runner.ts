import { performance } from 'node:perf_hooks';
import {
  AiError,
  fallsBack,
  type AiProvider,
  type AiReply,
  type AiRequest,
  type TokenUsage,
} from './ai-provider.js';
import { withChatSpan, type ChatParent } from '../tracing/tracing.js';
import { costOfCall, type Prices } from './call-cost.js';

/** One provider of a channel's list, as it is called: by name, with the model it is asked for. */
export interface CallTarget {
  /** The provider's name in the workspace (`default` for the server's own). */
  provider: string;
  /** Undefined when the workspace has no such provider (deleted since the channel named it). */
  instance: AiProvider | undefined;
  /** Undefined only when nothing names a model; then only the echo can be asked. */
  model: string | undefined;
  /** How the workspace's calls through this provider are priced; absent, costs are unknown. */
  prices?: Prices;
}

/** One AI call as the event keeps it (`calls`). */
export interface AiCall {
  provider: string;
  model: string | null;
  status: 'ok' | 'error';
  http_status: number | null;
  error: string | null;
  latency_ms: number;
  usage: TokenUsage | null;
  cost_usd: number | null;
}

/**
 * The record of one call: the only place a call's record is made, so what is added to every
 * call (its cost) is added here.
 */
export function callRecord(
  target: CallTarget,
  latencyMs: number,
  outcome: { reply: AiReply; error?: AiError } | { reply?: undefined; error: AiError },
): AiCall {
  const { reply, error } = outcome;
  const model = reply?.model ?? target.model ?? null;
  // A refused answer was billed all the same: its usage is kept, on the reply or on the error.
  const usage = reply?.usage ?? error?.usage ?? null;
  return {
    provider: target.provider,
    model,
    status: error ? 'error' : 'ok',
    http_status: error ? (error.httpStatus ?? null) : 200,
    error: error ? cut(error.message) : null,
    latency_ms: Math.max(0, Math.round(latencyMs)),
    usage,
    cost_usd: target.prices ? costOfCall(target.prices, model, usage) : null,
  };
}

export type FallbackResult =
  | { ok: true; reply: AiReply; target: CallTarget; calls: AiCall[] }
  | { ok: false; error: AiError; target: CallTarget; calls: AiCall[] };

/**
 * One attempt at an event: asks the first target, and the next one at once whenever a call
 * fails in a way another server may not (`fallsBack`: no answer, 408, 429, 5xx, 529). A
 * `Retry-After` holds back only the provider that sent it (its own pause), never the next one.
 * Any other error, or a reply `check` refuses (a `reply_invalid`), ends the attempt: another
 * model would most likely do the same. When the attempt fails, the event may be retried
 * (`retryable` if any call's failure was passing) after the longest `Retry-After` any gave.
 * Rejects only with `signal.reason` when the caller aborts.
 */
export async function runWithFallbacks(
  targets: readonly CallTarget[],
  request: AiRequest,
  signal: AbortSignal,
  check: (reply: AiReply, target: CallTarget) => Promise<AiError | undefined>,
  /** The `event process` span each call's `chat {model}` span belongs to (src/tracing/). */
  chatParent?: ChatParent,
): Promise<FallbackResult> {
  const calls: AiCall[] = [];
  let retryable = false;
  let retryAfterMs: number | undefined;
  for (const [index, target] of targets.entries()) {
    const started = performance.now();
    let error: AiError;
    try {
      const reply = await ask(target, request, signal, chatParent);
      const invalid = await check(reply, target);
      calls.push(callRecord(target, reply.latencyMs, { reply, error: invalid }));
      if (!invalid) return { ok: true, reply, target, calls };
      const ended = new AiError(
        invalid.message,
        retryable || invalid.retryable,
        retryAfterMs,
        invalid.failure,
        invalid.rejectedReply,
      );
      return { ok: false, error: ended, target, calls };
    } catch (thrown) {
      if (signal.aborted) throw signal.reason;
      // Anything but an AiError is unexpected; it may pass, and max attempts bounds the retries.
      error =
        thrown instanceof AiError
          ? thrown
          : new AiError(`Unexpected error: ${messageOf(thrown)}`, true);
    }
    calls.push(callRecord(target, performance.now() - started, { error }));
    retryable ||= error.retryable;
    if (error.retryAfterMs !== undefined) {
      retryAfterMs = Math.max(retryAfterMs ?? 0, error.retryAfterMs);
    }
    if (index === targets.length - 1 || !fallsBack(error)) {
      const ended = new AiError(error.message, retryable, retryAfterMs, error.failure);
      return { ok: false, error: ended, target, calls };
    }
  }
  throw new Error('runWithFallbacks needs at least one target');
}

function ask(
  target: CallTarget,
  request: AiRequest,
  signal: AbortSignal,
  chatParent: ChatParent,
): Promise<AiReply> {
  const { instance, model } = target;
  if (!instance) {
    throw new AiError(`This workspace has no provider named "${target.provider}".`, false);
  }
  if (model === undefined && !instance.deterministic) {
    throw new AiError(
      `No model is named for the provider "${target.provider}": set the channel's ai.model (or the fallback's model).`,
      false,
    );
  }
  return withChatSpan(chatParent, { provider: instance.name, model, prompt: request.prompt }, () =>
    instance.complete({ ...request, model }, signal),
  );
}

/** A call's error is kept to its first 1000 characters: an event keeps up to 20 calls. */
function cut(message: string): string {
  return message.length > 1000 ? `${message.slice(0, 1000)}…` : message;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import type { TokenUsage } from '../ai/ai-provider.js';
import type { AiCall, FallbackResult } from '../ai/fallback-runner.js';

/** What one attempt's calls leave on the event. */
export interface AiCallRecord {
  /** The provider (by name) and model of the call whose answer was kept, else of the last call. */
  provider: string;
  model: string | null;
  /** Of the call whose answer was kept (or found invalid); null keeps what is stored. */
  usage: TokenUsage | null;
  latencyMs: number | null;
  /** Every call of the attempt, oldest first (appended to the event's `calls`). */
  calls: readonly AiCall[];
}

/** The record of an attempt that made calls. */
export function attemptRecord(result: FallbackResult): AiCallRecord {
  const last = result.calls.at(-1);
  const answered = last?.status === 'ok' || last?.http_status === 200 ? last : undefined;
  return {
    provider: result.target.provider,
    model: last?.model ?? null,
    usage: answered?.usage ?? null,
    latencyMs: answered?.latency_ms ?? null,
    calls: result.calls,
  };
}

/**
 * The parameters `usage`, `latency_ms`, `provider`, `model` and `calls` (JSON text) of a queue
 * statement, or nulls to keep what is stored.
 */
export function callParams(
  call: AiCallRecord | undefined,
): [string | null, number | null, string | null, string | null, string | null] {
  if (!call) return [null, null, null, null, null];
  return [
    call.usage ? JSON.stringify(call.usage) : null,
    call.latencyMs,
    call.provider,
    call.model,
    JSON.stringify(call.calls),
  ];
}

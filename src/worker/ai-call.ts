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
  /** The sum of the known costs of the attempt's calls in USD; null or absent when none is known. */
  costUsd?: number | null;
  /** Every call of the attempt, oldest first (appended to the event's `calls`). */
  calls: readonly AiCall[];
}

/** The record of an attempt that made calls. */
export function attemptRecord(result: FallbackResult): AiCallRecord {
  const last = result.calls.at(-1);
  const answered = last?.status === 'ok' || last?.http_status === 200 ? last : undefined;
  const costs = result.calls.flatMap((call) => (call.cost_usd === null ? [] : [call.cost_usd]));
  return {
    provider: result.target.provider,
    model: last?.model ?? null,
    usage: answered?.usage ?? null,
    latencyMs: answered?.latency_ms ?? null,
    costUsd: costs.length ? costs.reduce((sum, cost) => sum + cost, 0) : null,
    calls: result.calls,
  };
}

/**
 * The parameters `usage`, `latency_ms`, `cost_usd`, `provider`, `model` and `calls` (JSON text)
 * of a queue statement, or nulls to keep what is stored. The statement adds the cost to the
 * event's own: an event's cost sums the known costs of the calls of its current outcome.
 */
export function callParams(
  call: AiCallRecord | undefined,
): [string | null, number | null, string | null, string | null, string | null, string | null] {
  if (!call) return [null, null, null, null, null, null];
  return [
    call.usage ? JSON.stringify(call.usage) : null,
    call.latencyMs,
    call.costUsd == null ? null : String(call.costUsd),
    call.provider,
    call.model,
    JSON.stringify(call.calls),
  ];
}

/** The SQL that adds a call's cost (`cost`, numeric, null when unknown) to the event's. */
export const ADD_CALL_COST = (cost: string) =>
  `case when ${cost} is null then events.cost_usd else coalesce(events.cost_usd, 0) + ${cost} end`;

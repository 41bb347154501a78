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
 * of a queue statement, or nulls to keep what is stored. The statement sets the event's calls
 * and cost with KEEP_CALLS and CALLS_COST.
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

/** The most calls an event lists (its current outcome's last ones); events_calls_kept keeps them. */
export const CALLS_KEPT = 20;

/**
 * The SQL of an event's calls after an attempt's `calls` (jsonb, null when it made none): a
 * first attempt's as they are while they fit (an attempt without tools makes at most four
 * calls; one with tool rounds up to four a round), otherwise appended and the last CALLS_KEPT
 * kept.
 */
export const KEEP_CALLS = (calls: string) =>
  `case when ${calls} is null then events.calls
     when events.calls = '[]' and jsonb_array_length(${calls}) <= ${CALLS_KEPT} then ${calls}
     else events_calls_kept(events.calls || ${calls}) end`;

/**
 * The SQL of an event's cost after an attempt's `calls` and their summed `cost` (numeric, null
 * when none is known): the sum over the calls it lists. While nothing is dropped that is the
 * stored cost plus the attempt's; once the oldest calls are dropped, the kept calls' costs are
 * summed again (events_calls_cost), so that dropped calls leave the sum.
 */
export const CALLS_COST = (calls: string, cost: string) =>
  `case when ${calls} is null then events.cost_usd
     when jsonb_array_length(events.calls) + jsonb_array_length(${calls}) <= ${CALLS_KEPT}
       then case when ${cost} is null then events.cost_usd
         else coalesce(events.cost_usd, 0) + ${cost} end
     else events_calls_cost(events_calls_kept(events.calls || ${calls})) end`;

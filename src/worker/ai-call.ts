import type { TokenUsage } from '../ai/ai-provider.js';

/** What the provider said about one answered call, stored with the event. */
export interface AiCallRecord {
  usage: TokenUsage | null;
  latencyMs: number;
  /** What the call cost in USD (see costOfCall); null or absent when unknown. */
  costUsd?: number | null;
}

/**
 * The parameters `usage`, `latency_ms` and `cost_usd` of a queue statement, or nulls to keep
 * what is stored. The statement adds the cost to the event's own: an event's cost sums the known
 * costs of the calls of its current outcome.
 */
export function callParams(
  call: AiCallRecord | undefined,
): [string | null, number | null, string | null] {
  if (!call) return [null, null, null];
  return [
    call.usage ? JSON.stringify(call.usage) : null,
    call.latencyMs,
    call.costUsd == null ? null : String(call.costUsd),
  ];
}

/** The SQL that adds a call's cost (`cost`, numeric, null when unknown) to the event's. */
export const ADD_CALL_COST = (cost: string) =>
  `case when ${cost} is null then events.cost_usd else coalesce(events.cost_usd, 0) + ${cost} end`;

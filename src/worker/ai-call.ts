import type { TokenUsage } from '../ai/ai-provider.js';

/** What the provider said about one answered call, stored with the event. */
export interface AiCallRecord {
  usage: TokenUsage | null;
  latencyMs: number;
}

/** The parameters `usage` and `latency_ms` of a queue statement, or nulls to keep what is stored. */
export function callParams(call: AiCallRecord | undefined): [string | null, number | null] {
  return call ? [call.usage ? JSON.stringify(call.usage) : null, call.latencyMs] : [null, null];
}

/**
 * A text[] as PostgreSQL's array literal, `{"a","b\"c"}`, for a statement that takes one list
 * per event: unnest cannot take an array of arrays of different lengths, and JSON is no way
 * around it (PostgreSQL's JSON refuses the lone surrogates a payload may hold).
 */
export function textArrayLiteral(items: readonly string[]): string {
  return `{${items.map((item) => `"${item.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}

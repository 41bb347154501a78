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

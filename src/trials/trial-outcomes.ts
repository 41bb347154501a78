import type { TokenUsage } from '../ai/ai-provider.js';
import type { EventToolCall } from '../events/event-row.js';

/** An event's stored outcome when the trial started (`current` of a result). */
export interface StoredOutcome {
  version: number | null;
  status: string;
  prompt: string | null;
  reply: string | null;
  error: string | null;
  usage: TokenUsage | null;
  cost_usd: number | null;
  /** The AI time of the stored outcome. */
  latency_ms: number | null;
}

/** What the candidate gave for one event (`candidate` of a result). */
export interface CandidateOutcome {
  status: 'replied' | 'failed' | 'skipped';
  prompt: string | null;
  reply: string | null;
  error: string | null;
  usage: TokenUsage | null;
  cost_usd: number | null;
  latency_ms: number | null;
  missing: string[];
  /** The candidate's tool calls: those not safe in trials `skipped` (src/worker/tool-rounds.ts). */
  tool_calls?: EventToolCall[];
}

/** One side of a trial's summary. */
export interface SideSummary {
  replied: number;
  failed: number;
  skipped: number;
  total_tokens: number;
  /** The sum of the known costs; null when none is known. */
  cost_usd: number | null;
  /** Over the outcomes whose AI time is known; null when none is. */
  mean_latency_ms: number | null;
}

type Outcome = Pick<StoredOutcome, 'status' | 'usage' | 'cost_usd' | 'latency_ms'>;

/** The summary of one side over the outcomes it has (a candidate's unasked ones are left out). */
export function summarize(outcomes: readonly Outcome[]): SideSummary {
  const costs = outcomes.flatMap((o) => (o.cost_usd === null ? [] : [Number(o.cost_usd)]));
  const latencies = outcomes.flatMap((o) => (o.latency_ms === null ? [] : [o.latency_ms]));
  const count = (status: string) => outcomes.filter((o) => o.status === status).length;
  return {
    replied: count('replied'),
    failed: count('failed'),
    skipped: count('skipped'),
    total_tokens: outcomes.reduce((sum, o) => sum + (o.usage?.total_tokens ?? 0), 0),
    cost_usd: costs.length ? costs.reduce((sum, cost) => sum + cost, 0) : null,
    mean_latency_ms: latencies.length
      ? Math.round(latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length)
      : null,
  };
}

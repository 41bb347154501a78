import type { AiCall } from '../ai/fallback-runner.js';
import type { Metrics } from '../metrics/metrics.js';

/** Counts each call of a workspace by provider, model and outcome, and its duration. */
export async function countCalls(
  metrics: Metrics,
  workspaceId: string,
  calls: readonly AiCall[],
): Promise<void> {
  for (const call of calls) {
    const model = await metrics.modelLabel(workspaceId, call.model);
    metrics.aiCalls.inc({ provider: call.provider, model, outcome: call.status });
    metrics.aiLatency.observe({ result: call.status }, call.latency_ms / 1000);
  }
}

import type { AiCall } from '../ai/fallback-runner.js';
import type { Metrics } from '../metrics/metrics.js';

/** Counts each call by provider, model and outcome, and its duration. */
export function countCalls(metrics: Metrics, calls: readonly AiCall[]): void {
  for (const call of calls) {
    metrics.aiCalls.inc({ provider: call.provider, model: call.model ?? '', outcome: call.status });
    metrics.aiLatency.observe({ result: call.status }, call.latency_ms / 1000);
  }
}

/** Latencies in milliseconds, summarised from every sample (no histogram buckets, no rounding). */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function summariseLatencies(samples: number[]): LatencySummary {
  if (samples.length === 0) return { count: 0, p50: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(samples).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] as number,
  };
}

/** Nearest-rank percentile: the smallest sample that at least `q` of all samples do not exceed. */
function percentile(sorted: Float64Array, q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1] as number;
}

/** Answers other than 200, by status ("error" for requests that got no answer at all). */
export type StatusCounts = Record<string, number>;

export function countStatus(counts: StatusCounts, status: string): void {
  counts[status] = (counts[status] ?? 0) + 1;
}

export function totalOf(counts: StatusCounts): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

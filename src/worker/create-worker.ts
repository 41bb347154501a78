import { createAiProvider } from '../ai/create-provider.js';
import type { AppContext } from '../context.js';
import { Worker, type WorkerOptions } from './worker.js';

/** A worker configured from the context; tests override single options (a second database, an id). */
export function createWorker(ctx: AppContext, overrides: Partial<WorkerOptions> = {}): Worker {
  const { config } = ctx;
  return new Worker({
    db: ctx.db,
    provider: createAiProvider(config.ai),
    log: ctx.log,
    metrics: ctx.metrics,
    concurrency: config.workerConcurrency,
    pollIntervalMs: config.workerPollIntervalMs,
    leaseMs: config.workerLeaseMs,
    maxAttempts: config.ai.maxAttempts,
    retryBaseMs: config.workerRetryBaseMs,
    shutdownGraceMs: config.workerShutdownGraceMs,
    ...overrides,
  });
}

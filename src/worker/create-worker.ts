import { createAiProvider } from '../ai/create-provider.js';
import type { Config } from '../platform/config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PricesService } from '../prices/prices-service.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import { shutdownBudget } from '../platform/shutdown.js';
import type { WorkspaceProviders } from '../ai/call-targets.js';
import { Worker, type WorkerOptions } from './worker.js';

export interface WorkerDeps {
  config: Config;
  db: Database;
  log: Logger;
  metrics: Metrics;
  prices: PricesService;
  spendLedger: SpendLedger;
  /** The workspaces' own providers (the context's per-process instances). */
  workspaceProviders?: WorkspaceProviders;
}

/** A worker configured from the config; tests override single options (a second database, an id). */
export function createWorker(ctx: WorkerDeps, overrides: Partial<WorkerOptions> = {}): Worker {
  const { config } = ctx;
  return new Worker({
    db: ctx.db,
    provider: createAiProvider(config.ai),
    providers: ctx.workspaceProviders,
    log: ctx.log,
    metrics: ctx.metrics,
    concurrency: config.workerConcurrency,
    pollIntervalMs: config.workerPollIntervalMs,
    leaseMs: config.workerLeaseMs,
    maxAttempts: config.ai.maxAttempts,
    retryBaseMs: config.workerRetryBaseMs,
    maxInputChars: config.ai.maxInputChars,
    // Within the process's own shutdown deadline, with time left to give the events back.
    shutdownGraceMs: Math.min(
      config.workerShutdownGraceMs,
      shutdownBudget(config.shutdownTimeoutMs).workerGraceMs,
    ),
    defaultModel: config.ai.model,
    pricesFor: (workspaceId, kind) => ctx.prices.pricesFor(workspaceId, kind),
    recordSpend: (call) => ctx.spendLedger.recordSpend(call),
    ...overrides,
  });
}

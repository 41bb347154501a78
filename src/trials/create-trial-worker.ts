import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createAiProvider } from '../ai/create-provider.js';
import type { WorkerDeps } from '../worker/create-worker.js';
import { shutdownBudget } from '../platform/shutdown.js';
import { TrialWorker, type TrialWorkerOptions } from './trial-worker.js';

/** A trial worker configured as the event worker is; tests override single options. */
export function createTrialWorker(
  ctx: WorkerDeps,
  overrides: Partial<TrialWorkerOptions> = {},
): TrialWorker {
  const { config } = ctx;
  return new TrialWorker({
    db: ctx.db,
    provider: createAiProvider(config.ai),
    providers: ctx.workspaceProviders,
    log: ctx.log,
    metrics: ctx.metrics,
    workerConcurrency: config.workerConcurrency,
    pollIntervalMs: config.workerPollIntervalMs,
    leaseMs: config.workerLeaseMs,
    maxInputChars: config.ai.maxInputChars,
    shutdownGraceMs: Math.min(
      config.workerShutdownGraceMs,
      shutdownBudget(config.shutdownTimeoutMs).workerGraceMs,
    ),
    workerId: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}:trials`,
    defaultModel: config.ai.model,
    pricesFor: (workspaceId, kind) => ctx.prices.pricesFor(workspaceId, kind),
    recordSpend: (call) => ctx.spendLedger.recordSpend(call),
    ...overrides,
  });
}

import { createAiProvider } from '../ai/create-provider.js';
import type { WorkerDeps } from '../worker/create-worker.js';
import { queueSettings, queueWorkerId } from '../queue/queue-settings.js';
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
    // One attempt with its fallbacks fits in the lease, as an event's does.
    ...queueSettings(config, 'ai call'),
    maxInputChars: config.ai.maxInputChars,
    workerId: queueWorkerId('trials'),
    defaultModel: config.ai.model,
    pricesFor: (workspaceId, kind) => ctx.prices.pricesFor(workspaceId, kind),
    recordSpend: (call) => ctx.spendLedger.recordSpend(call),
    ...overrides,
  });
}

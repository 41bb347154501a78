import { createAiProvider } from '../ai/create-provider.js';
import type { Config } from '../platform/config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PricesService } from '../prices/prices-service.js';
import type { SpendLedger } from '../spend/spend-ledger.js';
import { queueSettings } from '../queue/queue-settings.js';
import type { WorkspaceProviders } from '../ai/call-targets.js';
import { Worker, type WorkerOptions } from './worker.js';
import { ImageFetcher } from '../attachments/image-fetcher.js';
import type { ToolsService } from '../tools/tools-service.js';

export interface WorkerDeps {
  config: Config;
  db: Database;
  log: Logger;
  metrics: Metrics;
  prices: PricesService;
  spendLedger: SpendLedger;
  /** The workspaces' own providers (the context's per-process instances). */
  workspaceProviders?: WorkspaceProviders;
  /** The workspaces' tools, opened for an attempt whose channel names some. */
  tools?: Pick<ToolsService, 'openToolbox'>;
}

/**
 * What every worker that asks the AI is built with (the event worker and the trial worker): its
 * providers, the queue settings of an AI call, the prices and the spend ledger.
 */
export function aiCallSettings(ctx: WorkerDeps) {
  const { config } = ctx;
  return {
    db: ctx.db,
    provider: createAiProvider(config.ai),
    providers: ctx.workspaceProviders,
    log: ctx.log,
    metrics: ctx.metrics,
    ...queueSettings(config, 'ai call'),
    maxInputChars: config.ai.maxInputChars,
    defaultModel: config.ai.model,
    imageFetcher: new ImageFetcher(config.attachments),
    pricesFor: (workspaceId: string, kind: string) => ctx.prices.pricesFor(workspaceId, kind),
    openToolbox: ctx.tools
      ? (workspaceId: string, names: readonly string[]) =>
          (ctx.tools as Pick<ToolsService, 'openToolbox'>).openToolbox(workspaceId, names)
      : undefined,
    recordSpend: (call: Parameters<SpendLedger['recordSpend']>[0]) =>
      ctx.spendLedger.recordSpend(call),
  };
}

/** A worker configured from the config; tests override single options (a second database, an id). */
export function createWorker(ctx: WorkerDeps, overrides: Partial<WorkerOptions> = {}): Worker {
  const { config } = ctx;
  return new Worker({
    ...aiCallSettings(ctx),
    concurrency: config.workerConcurrency,
    maxAttempts: config.ai.maxAttempts,
    retryBaseMs: config.workerRetryBaseMs,
    approvalTimeoutS: config.tools.approvalTimeoutS,
    ...overrides,
  });
}

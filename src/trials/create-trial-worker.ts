import { aiCallSettings, type WorkerDeps } from '../worker/create-worker.js';
import { queueWorkerId } from '../queue/queue-settings.js';
import { TrialWorker, type TrialWorkerOptions } from './trial-worker.js';

/** A trial worker configured as the event worker is; tests override single options. */
export function createTrialWorker(
  ctx: WorkerDeps,
  overrides: Partial<TrialWorkerOptions> = {},
): TrialWorker {
  return new TrialWorker({
    // One attempt with its fallbacks fits in the lease, as an event's does.
    ...aiCallSettings(ctx),
    workerConcurrency: ctx.config.workerConcurrency,
    workerId: queueWorkerId('trials'),
    ...overrides,
  });
}

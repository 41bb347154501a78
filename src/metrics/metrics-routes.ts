import { Router } from 'express';
import type { Logger } from '../platform/logger.js';
import type { Metrics, QueueStats } from './metrics.js';

/** `GET /metrics` in the Prometheus text format; served by every role. */
export function metricsRoutes(
  metrics: Metrics,
  readQueueStats: () => Promise<QueueStats>,
  log: Logger,
): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    try {
      metrics.showQueue(await readQueueStats());
    } catch (error) {
      // The process metrics are still worth having; the queue numbers are left out, not faked.
      metrics.forgetQueue();
      log.warn({ err: error }, 'queue metrics unavailable: database unreachable');
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}

import { Router } from 'express';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

/** `GET /metrics` in the Prometheus text format; served by every role. */
export function metricsRoutes(metrics: Metrics, db: Database, log: Logger): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    try {
      await metrics.refreshQueue(db);
    } catch (error) {
      // The process metrics are still worth having; the queue numbers are left out, not faked.
      metrics.forgetQueue();
      log.warn({ err: error }, 'queue metrics unavailable: database unreachable');
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}

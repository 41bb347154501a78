import { Router, type RequestHandler } from 'express';
import { AppError } from '../platform/errors.js';
import type { Logger } from '../platform/logger.js';
import { sameSecret } from '../platform/secrets.js';
import type { Metrics, QueueStats } from './metrics.js';

/**
 * `GET /metrics` in the Prometheus text format; served by every role. With METRICS_TOKEN set,
 * only to a scraper that sends it as a bearer token.
 */
export function metricsRoutes(
  metrics: Metrics,
  readQueueStats: () => Promise<QueueStats>,
  log: Logger,
  token: string | undefined,
): Router {
  const router = Router();
  router.get('/metrics', requireToken(token), async (_req, res) => {
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

function requireToken(token: string | undefined): RequestHandler {
  return (req, _res, next) => {
    if (token === undefined) return next();
    const given = /^Bearer\s+(.+?)\s*$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!sameSecret(given, token)) {
      throw new AppError(
        401,
        'unauthorized',
        'Unauthorized',
        'Send the metrics token (METRICS_TOKEN) as "Authorization: Bearer <token>".',
        { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      );
    }
    next();
  };
}

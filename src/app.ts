import express from 'express';
import { pinoHttp } from 'pino-http';
import { apiRouter } from './api/api-router.js';
import type { AppContext } from './context.js';
import { errorHandler, notFound } from './errors.js';
import { healthRoutes } from './health-routes.js';
import { hooksRouter } from './hooks/hooks-routes.js';
import { redactUrl } from './logger.js';
import { metricsRoutes } from './metrics/metrics-routes.js';
import { panelRouter } from './panel/panel-router.js';
import { viewsDir } from './paths.js';

/** The HTTP app for the web role; it does not listen (main.ts and the tests do). */
export function createApp(ctx: AppContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', ctx.config.trustProxy);
  app.set('views', viewsDir);
  app.set('view engine', 'ejs');
  // The request log is written at info; below that level the middleware would be pure cost.
  if (ctx.log.isLevelEnabled('info')) app.use(requestLogger(ctx));
  // Webhooks first: the busiest path should not walk past the other routers.
  app.use(
    '/hooks',
    hooksRouter(
      ctx.ingest,
      ctx.hookLimits,
      ctx.config,
      ctx.log,
      ctx.metrics,
      ctx.answers,
      ctx.config.syncWaitMaxS,
    ),
  );
  app.use(healthRoutes(ctx.db, ctx.redis));
  app.use(metricsRoutes(ctx.metrics, ctx.readQueueStats, ctx.log));
  app.use('/api/v1', apiRouter(ctx));
  app.use(panelRouter(ctx));
  app.use(() => {
    throw notFound('This page');
  });
  app.use(errorHandler(ctx.log));
  return app;
}

/** The HTTP app of a `ROLE=worker` process: health, readiness and metrics, nothing else. */
export function createOpsApp(ctx: AppContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(healthRoutes(ctx.db, ctx.redis));
  app.use(metricsRoutes(ctx.metrics, ctx.readQueueStats, ctx.log));
  app.use(() => {
    throw notFound('This page');
  });
  app.use(errorHandler(ctx.log));
  return app;
}

/** One line per request; webhook tokens are cut from URLs and no bodies are logged. */
function requestLogger(ctx: AppContext) {
  return pinoHttp({
    logger: ctx.log,
    quietReqLogger: true,
    autoLogging: {
      ignore: (req) => req.url === '/healthz' || req.url === '/readyz' || req.url === '/metrics',
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    serializers: {
      req: (req: { method: string; url: string; remoteAddress?: string }) => ({
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customProps: (_req, res) => {
      const eventId = (res as { locals?: { eventId?: string } }).locals?.eventId;
      return eventId ? { eventId } : {};
    },
  });
}

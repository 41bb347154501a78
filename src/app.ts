import express from 'express';
import { pinoHttp } from 'pino-http';
import { apiRouter } from './api/api-router.js';
import type { AppContext } from './context.js';
import { errorHandler, notFound } from './errors.js';
import { healthRoutes } from './health-routes.js';
import { hooksRouter } from './hooks/hooks-routes.js';
import { redactUrl } from './logger.js';

/** The HTTP app for the web role; it does not listen (main.ts and the tests do). */
export function createApp(ctx: AppContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', ctx.config.trustProxy);
  app.use(requestLogger(ctx));
  app.use(healthRoutes(ctx.db));
  app.use(hooksRouter(ctx.ingest, ctx.hookLimits, ctx.config.bodyLimitBytes, ctx.log));
  app.use('/api/v1', apiRouter(ctx));
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
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
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

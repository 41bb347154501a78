import type { RequestListener } from 'node:http';
import express from 'express';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { apiRouter } from './api/api-router.js';
import type { AppContext } from './context.js';
import { errorHandler, notFound } from './platform/errors.js';
import { healthRoutes } from './metrics/health-routes.js';
import { webhookFastPath } from './hooks/hook-fast-path.js';
import { hooksRouter } from './hooks/hooks-routes.js';
import { loggedEventId, WebhookReceiver } from './hooks/webhook-receiver.js';
import { redactUrl } from './platform/logger.js';
import { metricsRoutes } from './metrics/metrics-routes.js';
import { panelRouter } from './panel/panel-router.js';
import { viewsDir } from './platform/paths.js';

/**
 * What the web role's HTTP server calls for each request. Webhooks (`POST /hooks/<token>`) are
 * answered by the receiver without going through Express (see src/hooks/hook-fast-path.ts);
 * every other request goes to the Express app, whose webhook route has the same receiver.
 */
export function createRequestListener(ctx: AppContext): RequestListener {
  const receiver = webhookReceiver(ctx);
  const logRequest = requestLogger(ctx);
  const app = buildApp(ctx, receiver, logRequest);
  const receiveWebhook = webhookFastPath(
    receiver,
    { trustProxy: app.get('trust proxy fn'), parseQuery: app.get('query parser fn') },
    logRequest,
  );
  return (req, res) => {
    if (!receiveWebhook(req, res)) app(req, res);
  };
}

/** The Express app of the web role, every route included; it does not listen. */
export function createApp(ctx: AppContext): express.Express {
  return buildApp(ctx, webhookReceiver(ctx), requestLogger(ctx));
}

function buildApp(
  ctx: AppContext,
  receiver: WebhookReceiver,
  logRequest: HttpLogger | undefined,
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', ctx.config.trustProxy);
  app.set('views', viewsDir);
  app.set('view engine', 'ejs');
  if (logRequest) app.use(logRequest);
  // Webhooks first: the busiest path should not walk past the other routers.
  app.use('/hooks', hooksRouter(receiver, ctx.answers, ctx.config.syncWaitMaxS));
  app.use(healthRoutes(ctx.db, ctx.redis));
  app.use(metricsRoutes(ctx.metrics, ctx.readQueueStats, ctx.log, ctx.config.metricsToken));
  app.use('/api/v1', apiRouter(ctx));
  app.use(panelRouter(ctx));
  app.use(() => {
    throw notFound('This page');
  });
  app.use(errorHandler(ctx.log));
  return app;
}

function webhookReceiver(ctx: AppContext): WebhookReceiver {
  return new WebhookReceiver({
    ingest: ctx.ingest,
    log: ctx.log,
    metrics: ctx.metrics,
    answers: ctx.answers,
  });
}

/** The HTTP app of a `ROLE=worker` process: health, readiness and metrics, nothing else. */
export function createOpsApp(ctx: AppContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(healthRoutes(ctx.db, ctx.redis));
  app.use(metricsRoutes(ctx.metrics, ctx.readQueueStats, ctx.log, ctx.config.metricsToken));
  app.use(() => {
    throw notFound('This page');
  });
  app.use(errorHandler(ctx.log));
  return app;
}

/**
 * One line per request; webhook tokens are cut from URLs and no bodies are logged. The request
 * log is written at info; below that level there is no logger, whose work would be pure cost.
 */
function requestLogger(ctx: AppContext): HttpLogger | undefined {
  if (!ctx.log.isLevelEnabled('info')) return undefined;
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
      const eventId = loggedEventId(res);
      return eventId ? { eventId } : {};
    },
  });
}

import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { AppError, sendProblem, serviceUnavailable } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { WEBHOOK_TOKEN_SHAPE } from '../channels/webhook-token.js';
import { hookErrors } from './hook-errors.js';
import type { IngestService } from './ingest-service.js';
import type { HookRateLimits } from './rate-limits.js';
import { readBody } from './read-body.js';

/**
 * `POST /hooks/:token` (mounted at `/hooks`). The middleware order is the order of the checks senders can rely on:
 * method, sender rate limit, token, channel rate limit, then the body checks in the service.
 */
export function hooksRouter(
  ingest: IngestService,
  limits: HookRateLimits,
  bodyLimitBytes: number,
  log: Logger,
  metrics?: Metrics,
): Router {
  const router = Router();

  const postOnly: RequestHandler = (req, _res, next) => {
    if (req.method !== 'POST') throw hookErrors.methodNotAllowed();
    next();
  };

  const findChannel: RequestHandler = async (req, res, next) => {
    const token = String(req.params.token);
    const channel = WEBHOOK_TOKEN_SHAPE.test(token) ? await ingest.findChannel(token) : undefined;
    if (!channel) throw hookErrors.channelNotFound();
    res.locals.channel = channel;
    next();
  };

  const receive: RequestHandler = async (req, res) => {
    const body = await readBody(req, bodyLimitBytes);
    const outcome = await ingest.ingest(res.locals.channel, req.headers['content-type'], body);
    if (!outcome.accepted) {
      metrics?.eventsRejected.inc({ code: outcome.error.code });
      res.locals.eventId = outcome.eventId;
      sendProblem(res, outcome.error);
      return;
    }
    metrics?.eventsReceived.inc();
    res.locals.eventId = outcome.eventId;
    res.status(200).json({ status: 'received', event_id: outcome.eventId });
  };

  router.all('/:token', postOnly, limits.perSender, findChannel, limits.perChannel, receive);
  router.all('/', postOnly, limits.perSender, () => {
    throw hookErrors.channelNotFound();
  });
  // Whatever else went wrong, the event was not stored: the sender must retry, so 503.
  const storageFailed: ErrorRequestHandler = (error, _req, _res, next) => {
    metrics?.eventsRejected.inc({
      code: error instanceof AppError ? error.code : 'service_unavailable',
    });
    if (error instanceof AppError) return next(error);
    log.error({ err: error }, 'webhook event could not be stored');
    next(serviceUnavailable());
  };
  router.use(storageFailed);
  return router;
}

import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { AppError, serviceUnavailable } from '../errors.js';
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
  metrics: Metrics,
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
    res.locals.eventId = outcome.eventId;
    if (!outcome.accepted) throw outcome.error;
    metrics.eventsReceived.inc();
    res.status(200).json({ status: 'received', event_id: outcome.eventId });
  };

  router.all('/:token', postOnly, limits.perSender, findChannel, limits.perChannel, receive);
  router.all('/', postOnly, limits.perSender, () => {
    throw hookErrors.channelNotFound();
  });
  // Every refusal passes here and is counted by its code. Anything that is not an AppError
  // means the event was not stored: the sender must retry, so 503.
  const refused: ErrorRequestHandler = (error, _req, _res, next) => {
    if (!(error instanceof AppError))
      log.error({ err: error }, 'webhook event could not be stored');
    const appError = error instanceof AppError ? error : serviceUnavailable();
    metrics.eventsRejected.inc({ code: appError.code });
    next(appError);
  };
  router.use(refused);
  return router;
}

import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { AppError, serviceUnavailable } from '../errors.js';
import { receivedAnswer, type EventAnswers } from '../events/event-answers.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { WEBHOOK_TOKEN_SHAPE } from '../channels/webhook-token.js';
import { HOOK_DEADLINES } from './hook-deadlines.js';
import { hookErrors } from './hook-errors.js';
import type { IngestService, ReceivingChannel } from './ingest-service.js';
import { senderKey, type HookRateLimits } from './rate-limits.js';
import { readBody } from './read-body.js';
import { requestedWait } from './requested-wait.js';
import { duplicateAnswer } from './webhook-answer.js';

/** What the receiver's steps hand on to each other in `res.locals`. */
export interface HookLocals extends Record<string, unknown> {
  channel: ReceivingChannel;
  /** When the request arrived (`Date.now()`): the receiver's deadlines count from here. */
  receivedAt: number;
  /** The stored (or rejected) event's id, for the request log. */
  eventId?: string;
}

type HookHandler = RequestHandler<{ token: string }, unknown, unknown, unknown, HookLocals>;

/**
 * `POST /hooks/:token` (mounted at `/hooks`). The middleware order is the order of the checks senders can rely on:
 * method, sender rate limit, token, channel rate limit, then the body checks in the service.
 * `GET /hooks/:token/events/:eventId` answers like the POST did, for an event of that channel.
 */
export function hooksRouter(
  ingest: IngestService,
  limits: HookRateLimits,
  bodyLimits: { bodyLimitBytes: number; bodyTimeoutMs: number },
  log: Logger,
  metrics: Metrics,
  answers: EventAnswers,
  syncWaitMaxS: number,
): Router {
  const router = Router();

  const postOnly: RequestHandler = (req, res, next) => {
    if (req.method !== 'POST') throw hookErrors.methodNotAllowed();
    res.locals.receivedAt = Date.now();
    next();
  };

  const limitSender: HookHandler = async (req, res, next) => {
    const refusal = await limits.perSender.hit(senderKey(req.ip), res);
    if (refusal) throw refusal;
    next();
  };

  const limitChannel: HookHandler = async (_req, res, next) => {
    const refusal = await limits.perChannel.hit(res.locals.channel.webhook_token_hash, res);
    if (refusal) throw refusal;
    next();
  };

  const findChannel: HookHandler = async (req, res, next) => {
    const { token } = req.params;
    const deadline = res.locals.receivedAt + HOOK_DEADLINES.lookupMs;
    const channel = WEBHOOK_TOKEN_SHAPE.test(token)
      ? await ingest.findChannel(token, deadline)
      : undefined;
    if (!channel) throw hookErrors.channelNotFound();
    res.locals.channel = channel;
    next();
  };

  const receive: HookHandler = async (req, res) => {
    const wait = requestedWait(req, syncWaitMaxS);
    const { bodyLimitBytes, bodyTimeoutMs } = bodyLimits;
    const body = await readBody(req, bodyLimitBytes, res.locals.receivedAt + bodyTimeoutMs);
    const webhook = {
      channel: res.locals.channel,
      headers: req.headers,
      body,
      senderIp: req.ip,
      deadline: Date.now() + HOOK_DEADLINES.storeMs,
    };
    const outcome =
      wait instanceof AppError ? await ingest.refuse(webhook, wait) : await ingest.receive(webhook);
    res.locals.eventId = outcome.eventId;
    if (!outcome.accepted) throw outcome.error;
    const waitMs = wait as number;
    if ('duplicate' in outcome) {
      metrics.eventsDuplicate.inc();
      // A duplicate waits like its first event would have.
      const first =
        waitMs > 0 ? await answers.forEvent(outcome.eventId, waitMs) : outcome.duplicate;
      res.status(200).json(duplicateAnswer(first));
      return;
    }
    metrics.eventsReceived.inc();
    res
      .status(200)
      .json(
        waitMs > 0
          ? await answers.forEvent(outcome.eventId, waitMs)
          : receivedAnswer(outcome.eventId),
      );
  };

  const getOnly: RequestHandler = (req, _res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw hookErrors.methodNotAllowed('GET');
    next();
  };

  // The sender fetches the reply later: no quota, no per-channel limit, only the sender's.
  const fetchAnswer: RequestHandler<{ token: string; eventId: string }> = async (req, res) => {
    const wait = requestedWait(req, syncWaitMaxS);
    if (wait instanceof AppError) throw wait;
    const channel = res.locals.channel as ReceivingChannel;
    const answer = await answers.inChannel(channel.id, req.params.eventId, wait);
    if (!answer) throw hookErrors.eventNotFound();
    res.status(200).json(answer);
  };

  router.all('/:token', postOnly, limitSender, findChannel, limitChannel, receive);
  router.all('/:token/events/:eventId', getOnly, limitSender, findChannel, fetchAnswer);
  router.all('/', postOnly, limitSender, () => {
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

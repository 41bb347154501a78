import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { AppError } from '../platform/errors.js';
import { isRowId } from '../platform/ids.js';
import type { EventAnswers } from '../events/event-answers.js';
import { hookErrors } from './hook-errors.js';
import type { ReceivingChannel } from './ingest-service.js';
import { requestedWait } from './requested-wait.js';
import type { WebhookReceiver } from './webhook-receiver.js';

/** What the routes' steps hand on to each other in `res.locals`. */
interface HookLocals extends Record<string, unknown> {
  channel: ReceivingChannel;
  /** When the request arrived (`Date.now()`): the lookup's deadline counts from here. */
  receivedAt: number;
}

type HookHandler = RequestHandler<
  { token: string; eventId: string },
  unknown,
  unknown,
  unknown,
  HookLocals
>;

/**
 * The webhook routes (mounted at `/hooks`). `POST /hooks/:token` is the receiver's: requests
 * the server's fast path answers never get here (see hook-fast-path.ts), those it leaves to
 * Express (another method, a URL it does not take as it stands) get the same receiver.
 * `GET /hooks/:token/events/:eventId` answers like the POST did, for an event of that channel.
 */
export function hooksRouter(
  receiver: WebhookReceiver,
  answers: EventAnswers,
  syncWaitMaxS: number,
): Router {
  const router = Router();

  const only =
    (allow: 'POST' | 'GET'): HookHandler =>
    (req, res, next) => {
      const allowed = allow === 'POST' ? req.method === 'POST' : /^(GET|HEAD)$/.test(req.method);
      if (!allowed) throw hookErrors.methodNotAllowed(allow);
      res.locals.receivedAt = Date.now();
      next();
    };

  const limitSender: HookHandler = async (req, res, next) => {
    await receiver.limitSender(req.ip, res);
    next();
  };

  const findChannel: HookHandler = async (req, res, next) => {
    res.locals.channel = await receiver.findChannel(req.params.token, res.locals.receivedAt);
    next();
  };

  // The sender fetches the reply later: no quota, no per-channel limit, only the sender's. The
  // event id is checked here, not before: the contract's order puts the token (404) first.
  const fetchAnswer: HookHandler = async (req, res) => {
    const wait = requestedWait(req, syncWaitMaxS);
    if (wait instanceof AppError) throw wait;
    if (!isRowId(req.params.eventId)) throw hookErrors.eventNotFound();
    const answer = await answers.inChannel(res.locals.channel.id, req.params.eventId, wait.ms);
    if (!answer) throw hookErrors.eventNotFound();
    if (wait.preferenceApplied) res.set('Preference-Applied', wait.preferenceApplied);
    res.status(200).json(answer);
  };

  router.all('/:token', (req, res) =>
    receiver.serve({ req, res, token: req.params.token, query: req.query, senderIp: req.ip }),
  );
  router.all('/:token/events/:eventId', only('GET'), limitSender, findChannel, fetchAnswer);
  router.all('/', only('POST'), limitSender, () => {
    throw hookErrors.channelNotFound();
  });
  const refused: ErrorRequestHandler = (error, _req, _res, next) => next(receiver.refused(error));
  router.use(refused);
  return router;
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, reportedError, sendProblem, serviceUnavailable } from '../platform/errors.js';
import { receivedAnswer, type EventAnswers } from '../events/event-answers.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { WEBHOOK_TOKEN_SHAPE } from '../channels/webhook-token.js';
import { HOOK_DEADLINES } from './hook-deadlines.js';
import { hookErrors } from './hook-errors.js';
import type { IngestOutcome, IngestService, ReceivingChannel } from './ingest-service.js';
import { senderKey, type HookRateLimits } from './rate-limits.js';
import { readBody } from './read-body.js';
import { requestedWait } from './requested-wait.js';
import { duplicateAnswer, sendAnswer, type WebhookAnswer } from './webhook-answer.js';

/** One `POST /hooks/:token`, however it reached the receiver (see hook-fast-path.ts). */
export interface HookRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The path segment after `/hooks/`, decoded. */
  token: string;
  /** The parsed query string, as Express's `req.query` gives it. */
  query: unknown;
  /** The sender's address as TRUST_PROXY resolves it (Express's `req.ip`). */
  senderIp: string | undefined;
}

export interface ReceiverParts {
  ingest: IngestService;
  limits: HookRateLimits;
  bodyLimits: { bodyLimitBytes: number; bodyTimeoutMs: number };
  log: Logger;
  metrics: Metrics;
  answers: EventAnswers;
  syncWaitMaxS: number;
}

type Accepted = Extract<IngestOutcome, { accepted: true }>;

const EVENT_ID = Symbol('hookprompt.eventId');
type WithEventId = ServerResponse & { [EVENT_ID]?: string };

/** The stored (or rejected) event's id of a webhook's answer, for the request log. */
export function loggedEventId(res: ServerResponse): string | undefined {
  return (res as WithEventId)[EVENT_ID];
}

/**
 * The webhook receiver: `POST /hooks/:token`. The order of its steps is the order of the checks
 * senders can rely on: method, sender rate limit, token, channel rate limit, then the body checks
 * in the ingest service. It works on Node's request and response, not Express's, so that webhooks
 * can be answered before the Express router (see hook-fast-path.ts) and through it alike.
 */
export class WebhookReceiver {
  constructor(private readonly parts: ReceiverParts) {}

  /** Answers the request, whatever happens: every failure becomes a problem answer. */
  async serve(hook: HookRequest): Promise<void> {
    try {
      await this.receive(hook);
    } catch (error) {
      const problem = reportedError(this.refused(error), this.parts.log);
      if (!hook.res.headersSent) sendProblem(hook.res, problem);
    }
  }

  /**
   * Every refusal of a webhook route passes here and is counted by its code. Anything that is not
   * an AppError means the event was not stored: the sender must retry, so 503.
   */
  refused(error: unknown): AppError {
    if (!(error instanceof AppError))
      this.parts.log.error({ err: error }, 'webhook event could not be stored');
    const appError = error instanceof AppError ? error : serviceUnavailable();
    this.parts.metrics.eventsRejected.inc({ code: appError.code });
    return appError;
  }

  /** Counts the request against its sender's limit; throws the 429 past it. */
  async limitSender(senderIp: string | undefined, res: ServerResponse): Promise<void> {
    const refusal = await this.parts.limits.perSender.hit(senderKey(senderIp), res);
    if (refusal) throw refusal;
  }

  /**
   * The channel of a webhook URL's token; throws 404 when there is none.
   * @param receivedAt when the request arrived: the lookup ends HOOK_DEADLINES.lookupMs after it
   */
  async findChannel(token: string, receivedAt: number): Promise<ReceivingChannel> {
    const channel = WEBHOOK_TOKEN_SHAPE.test(token)
      ? await this.parts.ingest.findChannel(token, receivedAt + HOOK_DEADLINES.lookupMs)
      : undefined;
    if (!channel) throw hookErrors.channelNotFound();
    return channel;
  }

  private async receive({ req, res, token, query, senderIp }: HookRequest): Promise<void> {
    if (req.method !== 'POST') throw hookErrors.methodNotAllowed();
    // The receiver's deadlines count from here.
    const receivedAt = Date.now();
    await this.limitSender(senderIp, res);
    const channel = await this.findChannel(token, receivedAt);
    const refusal = await this.parts.limits.perChannel.hit(channel.webhook_token_hash, res);
    if (refusal) throw refusal;

    const { ingest, bodyLimits, syncWaitMaxS } = this.parts;
    const wait = requestedWait({ headers: req.headers, query }, syncWaitMaxS);
    const body = await readBody(
      req,
      bodyLimits.bodyLimitBytes,
      receivedAt + bodyLimits.bodyTimeoutMs,
    );
    const webhook = {
      channel,
      headers: req.headers,
      body,
      senderIp,
      deadline: Date.now() + HOOK_DEADLINES.storeMs,
    };
    const outcome =
      wait instanceof AppError ? await ingest.refuse(webhook, wait) : await ingest.receive(webhook);
    (res as WithEventId)[EVENT_ID] = outcome.eventId;
    if (!outcome.accepted) throw outcome.error;
    sendAnswer(res, await this.answer(outcome, wait as number));
  }

  /** The 200 body: the event as it stands, or once it finishes when the sender waits. */
  private async answer(outcome: Accepted, waitMs: number): Promise<WebhookAnswer> {
    const { metrics, answers } = this.parts;
    if ('duplicate' in outcome) {
      metrics.eventsDuplicate.inc();
      // A duplicate waits like its first event would have.
      const first =
        waitMs > 0 ? await answers.forEvent(outcome.eventId, waitMs) : outcome.duplicate;
      return duplicateAnswer(first);
    }
    metrics.eventsReceived.inc();
    return waitMs > 0
      ? await answers.forEvent(outcome.eventId, waitMs)
      : receivedAnswer(outcome.eventId);
  }
}

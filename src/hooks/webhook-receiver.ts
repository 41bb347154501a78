import type { ServerResponse } from 'node:http';
import { AppError, reportedError, sendProblem, serviceUnavailable } from '../platform/errors.js';
import { receivedAnswer, type EventAnswers } from '../events/event-answers.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { IngestService } from './ingest-service.js';
import { endWebhookSpan, eventTrace, startWebhookSpan } from '../tracing/tracing.js';
import { Intake, type HookRequest, type IngestOutcome } from './intake.js';
import { channelOf, limitSenderOf } from './intake-pipeline.js';
import { allowOriginFor, answerPreflight, takesBrowserSenders } from './browser-origins.js';
import { hookErrors } from './hook-errors.js';
import { headerValue } from './request-headers.js';
import type { ReceivingChannel } from './ingest-repo.js';
import { duplicateAnswer, sendAnswer, type WebhookAnswer } from './webhook-answer.js';

export type { HookRequest } from './intake.js';

export interface ReceiverParts {
  ingest: IngestService;
  log: Logger;
  metrics: Metrics;
  answers: EventAnswers;
}

type Accepted = Exclude<Extract<IngestOutcome, { accepted: true }>, { challenge: string }>;

const EVENT_ID = Symbol('hookprompt.eventId');
type WithEventId = ServerResponse & { [EVENT_ID]?: string };

/** The stored (or rejected) event's id of a webhook's answer, for the request log. */
export function loggedEventId(res: ServerResponse): string | undefined {
  return (res as WithEventId)[EVENT_ID];
}

/**
 * The webhook receiver's door: `POST /hooks/:token` in, its answer out. The checks and the
 * writing are the pipeline's (intake-pipeline.ts). It works on Node's request and response, not
 * Express's, so that webhooks can be answered before the Express router (see hook-fast-path.ts)
 * and through it alike.
 */
export class WebhookReceiver {
  constructor(private readonly parts: ReceiverParts) {}

  /** Answers the request, whatever happens: every failure becomes a problem answer. */
  async serve(hook: HookRequest): Promise<void> {
    if (hook.req.method === 'OPTIONS') return this.answerPreflight(hook);
    const span = startWebhookSpan(hook.req.headers);
    const intake = Intake.of(hook, eventTrace(span));
    await this.answerWebhook(intake, hook.res);
    if (span) {
      // `channel` and `text` are unset when the request was refused before they were found.
      const { channel, text } = intake;
      const eventId = loggedEventId(hook.res);
      endWebhookSpan(span, {
        channelId: channel?.id,
        eventId,
        status: hook.res.statusCode,
        payload: text,
      });
    }
  }

  private async answerWebhook(intake: Intake, res: ServerResponse): Promise<void> {
    try {
      const outcome = await this.parts.ingest.receive(intake);
      (res as WithEventId)[EVENT_ID] = outcome.eventId;
      if (!outcome.accepted) throw outcome.error;
      if ('challenge' in outcome) return sendAnswer(res, { challenge: outcome.challenge });
      const answer = await this.answer(outcome, intake.waitMs);
      if (intake.preferenceApplied) res.setHeader('Preference-Applied', intake.preferenceApplied);
      sendAnswer(res, answer);
    } catch (error) {
      const problem = reportedError(this.refused(error), this.parts.log);
      if (!res.headersSent) sendProblem(res, problem);
    }
  }

  /**
   * A browser's preflight: may a page on its origin POST here? Only a channel that lists origins
   * takes one (others answer 405, as to any method but POST). Nothing is stored.
   */
  private async answerPreflight({ req, res, token, senderIp }: HookRequest): Promise<void> {
    try {
      await this.limitSender(senderIp, res);
      const channel = await this.findChannel(token, Date.now());
      if (!takesBrowserSenders(channel)) throw hookErrors.methodNotAllowed();
      const origin = headerValue(req.headers, 'origin') ?? '';
      const allowOrigin = allowOriginFor(channel, origin);
      if (allowOrigin === undefined) throw hookErrors.originNotAllowed(origin);
      answerPreflight(res, allowOrigin);
    } catch (error) {
      const problem = reportedError(this.refused(error), this.parts.log);
      if (!res.headersSent) sendProblem(res, problem);
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
  limitSender(senderIp: string | undefined, res: ServerResponse): Promise<void> {
    return limitSenderOf(this.parts.ingest, senderIp, res);
  }

  /** The channel of a webhook URL's token; throws 404 when there is none. */
  findChannel(token: string, receivedAt: number): Promise<ReceivingChannel> {
    return channelOf(this.parts.ingest, token, receivedAt);
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
    // Finished on arrival: nothing to wait for.
    if ('filtered' in outcome) return { status: 'filtered', event_id: outcome.eventId };
    return waitMs > 0
      ? await answers.forEvent(outcome.eventId, waitMs)
      : receivedAnswer(outcome.eventId);
  }
}

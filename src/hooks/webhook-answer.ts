import type { ServerResponse } from 'node:http';
import { answerOf, type AnswerRow, type EventAnswer } from '../events/event-answers.js';
import type { FirstEvent } from './store-event-batch.js';

/** The 200 body of a webhook: what the sender may act on (see src/events/event-answers.ts). */
export type WebhookAnswer = EventAnswer & { duplicate?: true };

/** A duplicate is answered with its first event as it stands (or once it finishes, waiting). */
export function duplicateAnswer(first: FirstEvent | EventAnswer): WebhookAnswer {
  const answer = 'event_id' in first ? first : answerOf(first as AnswerRow);
  return { ...answer, duplicate: true };
}

/**
 * Sends a `200` JSON answer with the headers Express's `res.json()` gives, on a plain response:
 * the receiver answers without Express.
 */
export function sendAnswer(
  res: ServerResponse,
  answer: WebhookAnswer | { challenge: string },
): void {
  const body = JSON.stringify(answer);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(body)));
  res.end(body);
}

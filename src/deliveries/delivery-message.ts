import type { EventJson } from '../events/event-object.js';
import type { DeliveryType } from './delivery-states.js';
import { signatureHeader } from './reply-secret.js';

/** The body of a reply delivery: what happened, when, and the event as the API shows it. */
export function messageBody(type: DeliveryType, event: EventJson, now: Date): string {
  return JSON.stringify({ type, timestamp: now.toISOString(), data: event });
}

/**
 * The Standard Webhooks headers of one attempt. The id stays the same on every attempt; the
 * timestamp is the attempt's own (receivers refuse old ones), and the signature covers both.
 */
export function messageHeaders(
  webhookId: string,
  body: string,
  secrets: readonly string[],
  now: Date,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'hookprompt-delivery',
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signatureHeader(webhookId, now, body, secrets),
  };
}

import type { EventJson } from '../events/event-object.js';
import type { DeliveryType } from './delivery-states.js';

export { messageHeaders } from '../outbound/standard-webhooks.js';

/** The body of a reply delivery: what happened, when, and the event as the API shows it. */
export function messageBody(type: DeliveryType, event: EventJson, now: Date): string {
  return JSON.stringify({ type, timestamp: now.toISOString(), data: event });
}

import { compileConditions } from '../conditions/conditions.js';
import type { DestinationToSend } from '../destinations/destinations-service.js';
import type { EventJson } from '../events/event-object.js';
import { parsePayload, renderTemplate, type JsonValue } from '../template/index.js';
import { messageBody } from './delivery-message.js';
import type { DeliveryType } from './delivery-states.js';

/** What `when` and `message` read of a finished event. */
export interface MessageSubject {
  status: string;
  payload: JsonValue | undefined;
  /** The reply parsed, when it is JSON. */
  json: JsonValue | undefined;
  /** The object `message` is rendered over: reply, json, payload, event. */
  view: JsonValue;
}

export function messageSubject(event: EventJson, channelName: string): MessageSubject {
  const payload = parsed(event.payload);
  const json = event.reply === null ? undefined : parsed(event.reply);
  const view = new Map<string, JsonValue>([
    ['reply', event.reply ?? ''],
    ['payload', payload ?? null],
    [
      'event',
      new Map<string, JsonValue>([
        ['id', event.id],
        ['status', event.status],
        ['channel_id', event.channel_id],
        ['channel_name', channelName],
        ['error', event.error],
      ]),
    ],
  ]);
  if (json !== undefined) view.set('json', json);
  return { status: event.status, payload, json, view };
}

/**
 * The message one target gets for an event, or why none is sent: its `when` does not hold
 * (`when: json.severity eq "high"`), or its message renders empty. The webhook kind sends the
 * Standard Webhooks body, with the rendered message beside the event; a target with no message
 * of its own (the reply URL) sends the body alone.
 */
export function destinationMessage(
  destination: DestinationToSend,
  subject: MessageSubject,
  event: EventJson,
  type: DeliveryType,
  now: Date,
): { message: string } | { skipped: string } {
  const failing = compileConditions(destination.when, ['status', 'payload', 'json'])?.failing(
    subject,
  );
  if (failing !== undefined) return { skipped: `when: ${failing} does not hold` };
  if (destination.message === null) return { message: messageBody(type, event, now) };
  const text = renderTemplate(destination.message, subject.view);
  if (text.trim() === '') return { skipped: 'the message rendered empty' };
  if (destination.kind !== 'webhook') return { message: text };
  const body = JSON.parse(messageBody(type, event, now)) as Record<string, unknown>;
  return { message: JSON.stringify({ ...body, message: text }) };
}

function parsed(text: string): JsonValue | undefined {
  try {
    return parsePayload(text);
  } catch {
    return undefined;
  }
}

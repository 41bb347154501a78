import type { Queryable } from '../db/database.js';
import type {
  DestinationDelivery,
  EventDeliveries,
  EventDelivery,
} from '../events/event-object.js';
import {
  destinationDeliveries,
  latestDeliveries,
  type DeliveryRow,
  type DestinationDeliveryRow,
} from './deliveries-repo.js';
import { shownStatus } from './delivery-states.js';

/**
 * The deliveries of each of these events: the latest of its reply delivery, if any (the
 * `delivery` field), and the latest message to each destination (`deliveries`).
 */
export async function deliveriesOfEvents(
  db: Queryable,
  eventIds: readonly string[],
): Promise<Map<string, EventDeliveries>> {
  const [replies, messages] = await Promise.all([
    latestDeliveries(db, eventIds),
    destinationDeliveries(db, eventIds),
  ]);
  const found = new Map<string, EventDeliveries>();
  const of = (eventId: string) => {
    let entry = found.get(eventId);
    if (!entry) found.set(eventId, (entry = { deliveries: [] }));
    return entry;
  };
  for (const row of replies) of(row.event_id).delivery = toEventDelivery(row);
  for (const row of messages) of(row.event_id).deliveries.push(toDestinationDelivery(row));
  return found;
}

export function toEventDelivery(row: DeliveryRow): EventDelivery {
  return {
    status: shownStatus(row.state, row.channel_delivery_on) as EventDelivery['status'],
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    delivered_at: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
  };
}

export function toDestinationDelivery(row: DestinationDeliveryRow): DestinationDelivery {
  return {
    destination_id: row.destination_id,
    kind: row.kind,
    ...toEventDelivery(row),
    status: shownStatus(row.state, row.channel_delivery_on),
  };
}

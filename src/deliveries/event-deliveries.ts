import type { Queryable } from '../db/database.js';
import type { EventDelivery } from '../events/event-object.js';
import { latestDeliveries, type DeliveryRow } from './deliveries-repo.js';
import { shownStatus } from './delivery-states.js';

/** The latest delivery of each of these events that has one: the events' `delivery` field. */
export async function deliveriesOfEvents(
  db: Queryable,
  eventIds: readonly string[],
): Promise<Map<string, EventDelivery>> {
  const rows = await latestDeliveries(db, eventIds);
  return new Map(rows.map((row) => [row.event_id, toEventDelivery(row)]));
}

export function toEventDelivery(row: DeliveryRow): EventDelivery {
  return {
    status: shownStatus(row.state, row.channel_delivery_on),
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    delivered_at: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
  };
}

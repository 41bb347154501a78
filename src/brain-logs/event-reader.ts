import { REPLY_INVALID } from '../ai/reply-check.js';
import type { Queryable } from '../db/database.js';
import type { DeliveriesService } from '../deliveries/deliveries-service.js';
import { toEventJson, type EventJson } from '../events/event-object.js';
import type { EventRow } from '../events/event-row.js';
import { EventsStore } from '../events/events-store.js';
import { eventPanelNotes, type EventPanelNotes } from './event-panel-notes-repo.js';

/**
 * The latest delivery of each of these events that has one: reply delivery's service, which
 * reads events itself and never Brain Logs, so the calls go one way.
 */
export type DeliveryLookup = DeliveriesService['deliveriesOf'];

const noDeliveries: DeliveryLookup = async () => new Map();

/**
 * Events as Brain Logs shows them: the API's event object with its reply delivery, asked of
 * reply delivery for a whole batch at once.
 */
export class EventReader {
  private readonly store: EventsStore;

  constructor(
    readonly db: Queryable,
    private readonly deliveries: DeliveryLookup = noDeliveries,
  ) {
    this.store = new EventsStore(db);
  }

  /** @throws AppError 404 when the event does not exist in this workspace. */
  async get(workspaceId: string, id: string): Promise<EventJson> {
    const row = await this.store.find(workspaceId, id);
    return toEventJson(row, (await this.deliveries([row.id])).get(row.id));
  }

  /**
   * What a refused sender was told, word for word, and what the model answered when its reply
   * was refused as `reply_invalid`: read only for events that have one (null otherwise).
   */
  async panelNotes(workspaceId: string, event: EventJson): Promise<EventPanelNotes> {
    const refused = event.status === 'rejected';
    const replyInvalid = event.error?.startsWith(`${REPLY_INVALID}:`) ?? false;
    if (!refused && !replyInvalid) return { refusalDetail: null, rejectedReply: null };
    return eventPanelNotes(this.db, workspaceId, event.id);
  }

  /** Rows as the API shows them, with their reply deliveries (one lookup for all of them). */
  async present(rows: EventRow[]): Promise<EventJson[]> {
    const deliveries = await this.deliveries(rows.map((row) => row.id));
    return rows.map((row) => toEventJson(row, deliveries.get(row.id)));
  }
}

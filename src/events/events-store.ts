import type { Queryable } from '../db/database.js';
import { notFound } from '../platform/errors.js';
import type { EventRow } from './event-row.js';
import { findEvent, findEventsByIds } from './events-repo.js';

/** Stored events read by id: what reply delivery and Brain Logs turn into the API's event object. */
export class EventsStore {
  constructor(private readonly db: Queryable) {}

  /** @throws AppError 404 when the event does not exist in this workspace. */
  async find(workspaceId: string, id: string): Promise<EventRow> {
    const row = await findEvent(this.db, workspaceId, id);
    if (!row) throw notFound('This event');
    return row;
  }

  /**
   * Several events by id, in any order, whatever their workspace: for ids from the service's own
   * records (the messages of reply delivery).
   */
  async findMany(ids: readonly string[]): Promise<EventRow[]> {
    return ids.length === 0 ? [] : findEventsByIds(this.db, ids);
  }
}

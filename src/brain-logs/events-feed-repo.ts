import type { Queryable } from '../db/database.js';
import { EVENT_COLUMNS, type EventRow } from '../events/event-row.js';
import { TEXT_BYTES, type EventSize } from './events-list-repo.js';
import { eventsWhere, type EventConditions } from './events-where.js';

/** One change of an event (stored, or given a new status), before the event is loaded. */
export interface EventChange extends EventSize {
  change_seq: string;
}

/**
 * Events of the filter changed after `afterSeq`, oldest change first: ids, change numbers and
 * sizes only, so a live tail loads just the events it has not sent, and not too many at once.
 */
export async function listChanges(
  db: Queryable,
  conditions: EventConditions,
  afterSeq: string,
  limit: number,
): Promise<EventChange[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = eventsWhere(conditions, param, true);
  const { rows } = await db.query<EventChange>(
    `select id, change_seq, ${TEXT_BYTES} as bytes from events
     where ${where.join(' and ')} and change_seq > ${param(afterSeq)}::bigint
     order by change_seq
     limit ${param(limit)}`,
    params,
  );
  return rows;
}

/** The events with these ids that the filter still matches, oldest change first. */
export async function changedEvents(
  db: Queryable,
  conditions: EventConditions,
  ids: readonly string[],
): Promise<EventRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = eventsWhere(conditions, param);
  const { rows } = await db.query<EventRow>(
    `select ${EVENT_COLUMNS} from events
     where ${where.join(' and ')} and id = any(${param(ids)}::bigint[])
     order by change_seq`,
    params,
  );
  return rows;
}

/** The newest change number of a workspace: a live tail without Last-Event-ID starts after it. */
export async function lastChangeSeq(db: Queryable, workspaceId: string): Promise<string> {
  const { rows } = await db.query<{ seq: string | null }>(
    `select max(change_seq) as seq from events where workspace_id = $1`,
    [workspaceId],
  );
  return rows[0]?.seq ?? '0';
}

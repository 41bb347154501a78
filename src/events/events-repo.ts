import type { Queryable } from '../db/database.js';
import { FINISHED_STATUSES, sqlStatusList } from './event-states.js';
import { EVENT_COLUMNS, type EventRow } from './event-row.js';

/** One event of a workspace, or undefined. */
export async function findEvent(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<EventRow | undefined> {
  const { rows } = await db.query<EventRow>(
    `select ${EVENT_COLUMNS} from events where workspace_id = $1 and id = $2`,
    [workspaceId, id],
  );
  return rows[0];
}

/** Several events by id, in any order, whatever their workspace (for the service's own use). */
export async function findEventsByIds(db: Queryable, ids: readonly string[]): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `select ${EVENT_COLUMNS} from events where id = any($1::bigint[])`,
    [ids],
  );
  return rows;
}

/** The database clock's instant `days` days ago: events received before it have expired. */
export async function retentionCutoff(db: Queryable, days: number): Promise<Date> {
  const { rows } = await db.query<{ cutoff: Date }>(
    `select now() - $1::integer * interval '1 day' as cutoff`,
    [days],
  );
  return (rows[0] as { cutoff: Date }).cutoff;
}

/** Every workspace id, read without a lock: retention walks them one at a time. */
export async function listWorkspaceIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('select id from workspaces order by id');
  return rows.map((row) => row.id);
}

/** Where a retention run is in one workspace: the (received_at, id) of the last event it deleted. */
export interface RetentionPosition {
  /** received_at as PostgreSQL text, with its microseconds and offset, so it reads back exactly. */
  receivedAt: string;
  id: string;
}

/** Before every event: where a workspace's first batch starts. */
export const RETENTION_START: RetentionPosition = { receivedAt: '-infinity', id: '0' };

/**
 * Deletes up to `limit` of a workspace's finished events received before `cutoff`, oldest first,
 * starting after `after`; says how many went and where the next batch starts.
 *
 * - Per workspace, so events_workspace_received_idx (read backwards: oldest first) finds the
 *   expired events as one bounded index range; no index is needed for retention alone, and
 *   ingest pays for none.
 * - Each batch starts where the previous one ended (`after`), not at the oldest event: the
 *   index entries of rows just deleted stay until vacuum, and stepping over all of them again
 *   would make every batch of a long run slower than the last.
 * - Only finished events: a pending or processing one still owes its sender a reply, however old.
 * - `for update skip locked` passes over rows another statement holds (a second process running
 *   retention at the same moment) instead of queueing behind them, and re-checks the conditions
 *   on the newest row version. A row passed over is deleted by a later run.
 * - An event's dedup key goes with it (it is a column of the event, migrations/0015).
 * - Deleting an event locks only that event's row: a foreign key takes no lock on the
 *   workspace or channel it points to when the referencing row goes, so ingest (which locks the
 *   workspace row for its quota) never waits for retention.
 */
export async function deleteExpiredEvents(
  db: Queryable,
  workspaceId: string,
  cutoff: Date,
  after: RetentionPosition,
  limit: number,
): Promise<{ deleted: number; last: RetentionPosition | undefined }> {
  const { rows } = await db.query<{
    deleted: number;
    received_at: string | null;
    id: string | null;
  }>(
    `with expired as (
       select id, received_at from events
       where workspace_id = $1 and received_at < $2
         and (received_at, id) > ($3::timestamptz, $4::bigint)
         and status in ${sqlStatusList(FINISHED_STATUSES)}
       order by received_at, id
       limit $5
       for update skip locked
     ),
     deleted as (
       delete from events using expired where events.id = expired.id
       returning expired.received_at, expired.id
     )
     select count(*)::integer as deleted,
            max(received_at)::text as received_at,
            (array_agg(id order by received_at desc, id desc))[1] as id
     from deleted`,
    [workspaceId, cutoff, after.receivedAt, after.id, limit],
  );
  const row = rows[0] as { deleted: number; received_at: string | null; id: string | null };
  return {
    deleted: row.deleted,
    last: row.received_at && row.id ? { receivedAt: row.received_at, id: row.id } : undefined,
  };
}

import type { Queryable } from '../db/database.js';
import type { EventCursor } from './events-cursor.js';
import { FINISHED_STATUSES, sqlStatusList } from './event-states.js';
import { EVENT_COLUMNS, type EventRow } from './event-row.js';
import { eventsWhere, type EventConditions } from './events-where.js';

/** An event whose long texts are cut to their first characters, with their full sizes in bytes. */
export interface EventPreviewRow extends EventRow {
  prompt_bytes: number | null;
  reply_bytes: number | null;
  /** The size of the payload's start as returned, in bytes (payload_bytes is the whole one's). */
  preview_bytes: number;
}

/**
 * `left()` reads only the start of a long value from storage, so a page of previews costs the
 * same whatever the payloads' sizes; octet_length() reads only the stored length.
 */
const previewColumns = (chars: number) => `id, channel_id, received_at, status,
  left(payload, ${chars}) as payload, payload_truncated, left(prompt, ${chars}) as prompt,
  left(reply, ${chars}) as reply, error, attempts, completed_at, headers, sender_ip, duplicates,
  model, usage, latency_ms, thread_key, missing, input_truncated, history, change_seq,
  octet_length(payload) as payload_bytes, octet_length(prompt) as prompt_bytes,
  octet_length(reply) as reply_bytes, octet_length(left(payload, ${chars})) as preview_bytes,
  to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as received_at_exact`;

/**
 * An event's texts in bytes as stored (payload, prompt, reply, error, history): octet_length
 * reads a stored text's length, not the text, and a history is short (migrations/0017).
 */
const TEXT_BYTES = `(octet_length(payload) + coalesce(octet_length(prompt), 0)
  + coalesce(octet_length(reply), 0) + coalesce(octet_length(error), 0)
  + octet_length(history::text))::integer`;

export interface EventQuery extends EventConditions {
  /** Only events after this one in the listing order (older, or as old with a smaller id). */
  after?: EventCursor;
  limit: number;
}

/** Where an event stands in a listing, and how many bytes of text it holds. */
export interface EventSize {
  id: string;
  /** payload, prompt, reply, error and history, in bytes as stored. */
  bytes: number;
}

/**
 * A page's events, newest first, ordered by (received_at desc, id desc): the order of the
 * indexes events_workspace_received_idx and events_channel_received_idx, so PostgreSQL reads a
 * page straight off the index, and deep pages cost no more than the first. Only the conditions
 * asked for are added, each with its own parameter, so the planner sees a plain range.
 *
 * Only ids and sizes (octet_length reads a stored value's length, not the value): the caller
 * decides how many events fit in one answer before loading them with `eventsByIds`.
 */
export async function listEventSizes(db: Queryable, query: EventQuery): Promise<EventSize[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = eventsWhere(query, param);
  if (query.after !== undefined) {
    where.push(
      `(received_at, id) < (${param(query.after.receivedAt)}::timestamptz, ${param(query.after.id)}::bigint)`,
    );
  }
  const { rows } = await db.query<{ id: string; bytes: number }>(
    `select id, ${TEXT_BYTES} as bytes
     from events
     where ${where.join(' and ')}
     order by received_at desc, id desc
     limit ${param(query.limit)}`,
    params,
  );
  return rows;
}

/** Whole events of a listing, newest first (see listEventSizes for the order and conditions). */
export async function listEvents(db: Queryable, query: EventQuery): Promise<EventRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = eventsWhere(query, param);
  if (query.after !== undefined) {
    where.push(
      `(received_at, id) < (${param(query.after.receivedAt)}::timestamptz, ${param(query.after.id)}::bigint)`,
    );
  }
  const { rows } = await db.query<EventRow>(
    `select ${EVENT_COLUMNS} from events
     where ${where.join(' and ')}
     order by received_at desc, id desc
     limit ${param(query.limit)}`,
    params,
  );
  return rows;
}

/** How many events match, counting no further than `cap` (so a count of millions stays cheap). */
export async function countEvents(
  db: Queryable,
  conditions: EventConditions,
  cap: number,
): Promise<number> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = eventsWhere(conditions, param);
  const { rows } = await db.query<{ count: number }>(
    `select count(*)::integer as count from (
       select 1 from events where ${where.join(' and ')} limit ${param(cap)}
     ) matching`,
    params,
  );
  return rows[0]?.count ?? 0;
}

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
  const where = eventsWhere(conditions, param);
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

/** The events with these ids in one workspace, newest first. */
export function eventsByIds(db: Queryable, workspaceId: string, ids: string[]) {
  return selectByIds<EventRow>(db, EVENT_COLUMNS, workspaceId, ids);
}

/** As eventsByIds, with payload, prompt and reply cut to their first `chars` characters. */
export function eventPreviewsByIds(
  db: Queryable,
  workspaceId: string,
  ids: string[],
  chars: number,
) {
  return selectByIds<EventPreviewRow>(db, previewColumns(Math.trunc(chars)), workspaceId, ids);
}

async function selectByIds<Row>(
  db: Queryable,
  columns: string,
  workspaceId: string,
  ids: string[],
): Promise<Row[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<Row>(
    `select ${columns} from events
     where workspace_id = $1 and id = any($2::bigint[])
     order by received_at desc, id desc`,
    [workspaceId, ids],
  );
  return rows;
}

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

/** An event of a thread as the event page lists it: when, how it ended, its texts' start. */
export interface ThreadEventRow {
  id: string;
  received_at: Date;
  status: string;
  /** The reply's first characters, or null. */
  reply: string | null;
  /** The error's first characters, or null. */
  error: string | null;
}

/** Where a thread is read from, and how much of it. */
export interface ThreadQuery {
  workspaceId: string;
  channelId: string;
  threadKey: string;
  /** The event the thread is read around. */
  aroundId: string;
  /** At most this many events after it... */
  newer: number;
  /** ...and this many from it back (itself included). */
  older: number;
  /** Reply and error are cut to this many characters. */
  chars: number;
}

/**
 * The events of one thread around one event, newest first. Ordered by id, the order the worker
 * answers a thread in (queue-claim.ts), so each half is one short range of events_thread_idx
 * (channel, thread key, id) read from the event outwards: a long thread costs no more than a
 * short one. `left()` reads only the start of a long reply.
 */
export async function listThreadEvents(db: Queryable, q: ThreadQuery): Promise<ThreadEventRow[]> {
  const columns = `id, received_at, status, left(reply, $6) as reply, left(error, $6) as error`;
  const thread = `workspace_id = $1 and channel_id = $2 and thread_key = $3`;
  const { rows } = await db.query<ThreadEventRow>(
    `select * from (
       (select ${columns} from events where ${thread} and id > $4 order by id limit $5)
       union all
       (select ${columns} from events where ${thread} and id <= $4 order by id desc limit $7)
     ) as around
     order by id desc`,
    [q.workspaceId, q.channelId, q.threadKey, q.aroundId, q.newer, Math.trunc(q.chars), q.older],
  );
  return rows;
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

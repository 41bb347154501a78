import type { Queryable } from '../db/database.js';
import { EVENT_COLUMNS, type EventRow } from '../events/event-row.js';
import type { EventCursor } from './events-cursor.js';
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
  provider, model, usage, calls, tool_calls, attachments, approval, latency_ms, cost_usd::float8 as cost_usd, thread_key,
  version, missing, input_truncated, redactions, history, change_seq, trace_id, cached_from,
  octet_length(payload) as payload_bytes, octet_length(prompt) as prompt_bytes,
  octet_length(reply) as reply_bytes, octet_length(left(payload, ${chars})) as preview_bytes,
  to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as received_at_exact`;

/**
 * An event's texts in bytes as stored (payload, prompt, reply, error, history, calls):
 * octet_length reads a stored text's length, not the text, and a history (migrations/0017) and
 * the calls (migrations/0021) are short.
 */
export const TEXT_BYTES = `(octet_length(payload) + coalesce(octet_length(prompt), 0)
  + coalesce(octet_length(reply), 0) + coalesce(octet_length(error), 0)
  + octet_length(history::text) + octet_length(calls::text))::integer`;

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
  const { rows } = await db.query<EventSize>(...pageStatement(query, `id, ${TEXT_BYTES} as bytes`));
  return rows;
}

/** Whole events of a listing, newest first (see listEventSizes for the order and conditions). */
export async function listEvents(db: Queryable, query: EventQuery): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(...pageStatement(query, EVENT_COLUMNS));
  return rows;
}

/** One page of a listing's `columns`, after the cursor when there is one. */
function pageStatement(query: EventQuery, columns: string): [string, unknown[]] {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = eventsWhere(query, param, true);
  if (query.after !== undefined) {
    where.push(
      `(received_at, id) < (${param(query.after.receivedAt)}::timestamptz, ${param(query.after.id)}::bigint)`,
    );
  }
  const text = `select ${columns} from events
     where ${where.join(' and ')}
     order by received_at desc, id desc
     limit ${param(query.limit)}`;
  return [text, params];
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

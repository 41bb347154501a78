import type { Queryable } from '../db/database.js';
import type { EventCursor } from './events-cursor.js';

export interface EventRow {
  id: string;
  channel_id: string;
  received_at: Date;
  /** received_at with microseconds, in UTC: what a cursor is made of. */
  received_at_exact: string;
  status: string;
  payload: string;
  prompt: string | null;
  reply: string | null;
  error: string | null;
  attempts: number;
  completed_at: Date | null;
}

const COLUMNS = `id, channel_id, received_at, status, payload, prompt, reply, error, attempts, completed_at,
  to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as received_at_exact`;

export interface EventQuery {
  workspaceId: string;
  channelId?: string;
  status?: string;
  /** Inclusive, ISO 8601. */
  from?: string;
  /** Exclusive, ISO 8601. */
  to?: string;
  /** Only events after this one in the listing order (older, or as old with a smaller id). */
  after?: EventCursor;
  limit: number;
}

/**
 * Newest first, ordered by (received_at desc, id desc): the order of the indexes
 * events_workspace_received_idx and events_channel_received_idx, so PostgreSQL reads a page
 * straight off the index, and deep pages cost no more than the first. Only the conditions
 * asked for are added, each with its own parameter, so the planner sees a plain range.
 */
export async function listEvents(db: Queryable, query: EventQuery): Promise<EventRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = [`workspace_id = ${param(query.workspaceId)}`];
  if (query.channelId !== undefined) where.push(`channel_id = ${param(query.channelId)}`);
  if (query.status !== undefined) where.push(`status = ${param(query.status)}`);
  if (query.from !== undefined) where.push(`received_at >= ${param(query.from)}::timestamptz`);
  if (query.to !== undefined) where.push(`received_at < ${param(query.to)}::timestamptz`);
  if (query.after !== undefined) {
    where.push(
      `(received_at, id) < (${param(query.after.receivedAt)}::timestamptz, ${param(query.after.id)}::bigint)`,
    );
  }
  const { rows } = await db.query<EventRow>(
    `select ${COLUMNS} from events
     where ${where.join(' and ')}
     order by received_at desc, id desc
     limit ${param(query.limit)}`,
    params,
  );
  return rows;
}

export async function findEvent(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<EventRow | undefined> {
  const { rows } = await db.query<EventRow>(
    `select ${COLUMNS} from events where workspace_id = $1 and id = $2`,
    [workspaceId, id],
  );
  return rows[0];
}

import type { Database, Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';

export interface ReceivingChannel {
  id: string;
  workspace_id: string;
  enabled: boolean;
  webhook_token_hash: string;
}

export async function findReceivingChannel(
  db: Queryable,
  tokenHash: string,
): Promise<ReceivingChannel | undefined> {
  const { rows } = await db.query<ReceivingChannel>(
    `select id, workspace_id, enabled, webhook_token_hash from channels
     where webhook_token_hash = $1 and deleted_at is null`,
    [tokenHash],
  );
  return rows[0];
}

export interface IncomingEvent {
  channel: ReceivingChannel;
  payload: string;
}

export interface StoredEvent {
  eventId: string;
  accepted: boolean;
}

/**
 * Stores a batch of valid events in one transaction, each using one chat of its workspace's
 * quota. The workspace rows are locked (in id order, so concurrent batches cannot deadlock)
 * before the room left is read, so no instance can accept past the quota; events that do not
 * fit are stored as rejected with `quota_exceeded`. A month that has begun since the last
 * accepted event starts the count again at 0. Results come back in the order of `events`.
 */
export async function storeEventBatch(
  db: Database,
  events: IncomingEvent[],
): Promise<StoredEvent[]> {
  return db.transaction(async (tx) => {
    const room = await lockQuotaRoom(tx, [...new Set(events.map((e) => e.channel.workspace_id))]);
    const accepted = events.map((event) => {
      const left = room.get(event.channel.workspace_id) ?? 0;
      room.set(event.channel.workspace_id, left - 1);
      return left > 0;
    });
    await spendChats(
      tx,
      events.filter((_, i) => accepted[i]),
    );

    // Ids are drawn first so that each result is tied to its event by position, not by the
    // (unspecified) order of an INSERT's returned rows.
    const { rows: ids } = await tx.query<{ id: string }>(
      `select nextval(pg_get_serial_sequence('events', 'id')) as id from generate_series(1, $1)`,
      [events.length],
    );
    const eventIds = ids.map((row) => row.id);
    await tx.query(
      `insert into events (id, workspace_id, channel_id, status, payload, error, completed_at)
       overriding system value
       select id, workspace_id, channel_id,
              case when accepted then 'pending' else 'rejected' end,
              payload,
              case when accepted then null else 'quota_exceeded' end,
              case when accepted then null else now() end
       from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::boolean[])
         as batch(id, workspace_id, channel_id, payload, accepted)`,
      [
        eventIds,
        events.map((e) => e.channel.workspace_id),
        events.map((e) => e.channel.id),
        events.map((e) => e.payload),
        accepted,
      ],
    );
    return eventIds.map((eventId, i) => ({ eventId, accepted: accepted[i] as boolean }));
  });
}

/** Locks the workspaces' rows until commit and returns the chats each has left this month. */
async function lockQuotaRoom(tx: Queryable, workspaceIds: string[]): Promise<Map<string, number>> {
  const { rows } = await tx.query<{ id: string; room: number }>(
    `select id,
            chat_quota - (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end) as room
     from workspaces where id = any($1::bigint[])
     order by id
     for update`,
    [workspaceIds],
  );
  return new Map(rows.map((row) => [row.id, row.room]));
}

async function spendChats(tx: Queryable, accepted: IncomingEvent[]): Promise<void> {
  if (accepted.length === 0) return;
  const perWorkspace = new Map<string, number>();
  for (const { channel } of accepted) {
    perWorkspace.set(channel.workspace_id, (perWorkspace.get(channel.workspace_id) ?? 0) + 1);
  }
  await tx.query(
    `update workspaces w set
       chats_used = (case when w.quota_period_start < ${CURRENT_MONTH_START} then 0 else w.chats_used end) + spent.chats,
       quota_period_start = ${CURRENT_MONTH_START}
     from unnest($1::bigint[], $2::integer[]) as spent(id, chats)
     where w.id = spent.id`,
    [[...perWorkspace.keys()], [...perWorkspace.values()]],
  );
}

/** A refused request, kept so admins can see why a sender fails. It uses no quota. */
export async function insertRejectedEvent(
  db: Queryable,
  channel: ReceivingChannel,
  payload: string,
  code: string,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into events (workspace_id, channel_id, status, payload, error, completed_at)
     values ($1, $2, 'rejected', $3, $4, now())
     returning id`,
    [channel.workspace_id, channel.id, payload, code],
  );
  return (rows[0] as { id: string }).id;
}

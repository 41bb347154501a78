import type { Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';

export interface ReceivingChannel {
  id: string;
  workspace_id: string;
  enabled: boolean;
  webhook_token_hash: string;
}

export async function findReceivingChannel(
  db: Queryable,
  by: { tokenHash: string } | { id: string },
): Promise<ReceivingChannel | undefined> {
  const [column, value] = 'id' in by ? ['id', by.id] : ['webhook_token_hash', by.tokenHash];
  const { rows } = await db.query<ReceivingChannel>(
    `select id, workspace_id, enabled, webhook_token_hash from channels
     where ${column} = $1 and deleted_at is null`,
    [value],
  );
  return rows[0];
}

export interface IncomingEvent {
  channel: ReceivingChannel;
  payload: string;
}

/** What became of one event of a batch; `eventId` is absent when nothing was stored (404). */
export interface StoredEvent {
  outcome: 'accepted' | 'quota_exceeded' | 'channel_disabled' | 'channel_not_found';
  eventId?: string;
}

/**
 * Stores a batch of valid events in one statement (one round trip, committed on its own).
 *
 * - The channel is checked again here, against its committed row: a lookup made before the
 *   body was read (possibly from the cache) cannot let an event through after its channel was
 *   disabled, deleted or given a new URL. Such events get `channel_disabled` (stored as
 *   rejected) or `channel_not_found` (not stored).
 * - Each accepted event uses one chat of its workspace's quota. The workspace rows are locked
 *   first, in id order so concurrent batches cannot deadlock, and the room left is read from
 *   the locked rows, so no instance can accept past the quota; the lock is held only while this
 *   statement runs and commits. Events that do not fit are stored as rejected with
 *   `quota_exceeded`. A month that has begun since the last accepted event counts from 0.
 * - Results come back in the order of `events`: ids are drawn per input row, not read from the
 *   insert's (unordered) output.
 */
export async function storeEventBatch(
  db: Queryable,
  events: IncomingEvent[],
): Promise<StoredEvent[]> {
  const { rows } = await db.query<{ id: string | null; outcome: StoredEvent['outcome'] }>(
    `with batch as (
       select batch.*, payloads.payload,
              case when channels.id is null then 'channel_not_found'
                   when not channels.enabled then 'channel_disabled'
              end as refusal
       from unnest($1::bigint[], $2::bigint[], $3::text[]) with ordinality
              as batch(workspace_id, channel_id, token_hash, position)
       join json_array_elements_text($4::json) with ordinality as payloads(payload, position)
         on payloads.position = batch.position
       left join channels on channels.id = batch.channel_id
                         and channels.webhook_token_hash = batch.token_hash
                         and channels.deleted_at is null
     ),
     room as (
       select id,
              chat_quota - (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end) as room
       from workspaces where id in (select workspace_id from batch where refusal is null)
       order by id
       for update
     ),
     decided as (
       select batch.position, batch.workspace_id, batch.channel_id, batch.payload,
              case when refusal is not null then refusal
                   when row_number() over (partition by batch.workspace_id, refusal is null
                                           order by batch.position) <= coalesce(room.room, 0)
                     then 'accepted'
                   else 'quota_exceeded'
              end as outcome
       from batch left join room on room.id = batch.workspace_id
     ),
     numbered as (
       select decided.*,
              case when outcome <> 'channel_not_found'
                then nextval(pg_get_serial_sequence('events', 'id')) end as id
       from decided
     ),
     spent as (
       update workspaces w set
         chats_used = (case when w.quota_period_start < ${CURRENT_MONTH_START} then 0 else w.chats_used end)
                      + per_workspace.chats,
         quota_period_start = ${CURRENT_MONTH_START}
       from (select workspace_id, count(*)::integer as chats
             from numbered where outcome = 'accepted' group by workspace_id) as per_workspace
       where w.id = per_workspace.workspace_id
     ),
     stored as (
       insert into events (id, workspace_id, channel_id, status, payload, error, completed_at)
       overriding system value
       select id, workspace_id, channel_id,
              case when outcome = 'accepted' then 'pending' else 'rejected' end,
              payload,
              case when outcome = 'accepted' then null else outcome end,
              case when outcome = 'accepted' then null else now() end
       from numbered where id is not null
     )
     select id, outcome from numbered order by position`,
    [
      events.map((e) => e.channel.workspace_id),
      events.map((e) => e.channel.id),
      events.map((e) => e.channel.webhook_token_hash),
      // One JSON array rather than a text[]: the driver escapes array elements in JavaScript,
      // character by character, which cost more than anything else in this call.
      JSON.stringify(events.map((e) => e.payload)),
    ],
  );
  return rows.map((row) => ({ outcome: row.outcome, eventId: row.id ?? undefined }));
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

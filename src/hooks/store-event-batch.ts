import type { Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';
import type { ReceivingChannel } from './ingest-repo.js';

export interface IncomingEvent {
  channel: ReceivingChannel;
  /** The body's bytes, UTF-8 JSON text (the receiver has checked both). */
  payload: Buffer;
  /** As the event keeps them (see keptHeaders). */
  headers: Record<string, string>;
  senderIp: string | undefined;
  /** The request's dedup key, or undefined when it cannot be a duplicate. */
  dedupKey: string | undefined;
  /** The rendered thread key (see renderThreadKey); absent or null: no thread. */
  threadKey?: string | null;
}

/** The event a duplicate is answered with, as it stands now. */
export interface FirstEvent {
  id: string;
  status: string;
  reply: string | null;
  error: string | null;
}

/**
 * What became of one event of a batch: `eventId` is the stored event (none for a 404, nor for
 * a duplicate). A duplicate names its first event, and gives it as `first` when this same batch
 * stored it; otherwise the caller counts the duplicate on it and reads it (countDuplicate).
 */
export type StoredEvent =
  | {
      outcome: 'accepted' | 'quota_exceeded' | 'channel_disabled' | 'channel_not_found';
      eventId?: string;
    }
  | { outcome: 'duplicate'; firstEventId: string; first?: FirstEvent };

/**
 * Stores a batch of valid events in one statement that commits on its own by `deadline` or not
 * at all: one round trip, with no BEGIN and COMMIT of its own to wait for.
 *
 * - The statement names its deadline first thing, before it reads any row: a COMMIT that
 *   reaches the database after it fails (migrations/0006), and its wait for a workspace's
 *   quota row ends at the deadline (`lock_timeout`). Sent inside a transaction, it names that
 *   transaction's deadline.
 * - The channel is checked again here, against its committed row: a lookup made before the
 *   body was read (possibly from the cache) cannot let an event through after its channel was
 *   disabled, deleted or given a new URL. Such events get `channel_disabled` (stored as
 *   rejected) or `channel_not_found` (not stored).
 * - Duplicates are decided before the quota, and use none of it. A request is a duplicate when
 *   its key is in dedup_keys and unexpired, or when an earlier request of the batch has the same
 *   key (it then shares that request's fate). The other keyed requests that fit the quota
 *   claim their key with `insert ... on conflict do update`: the primary key serialises every
 *   transaction claiming one key, and the conflicting row is read in its newest committed
 *   version, so a request that lost the race to another instance's transaction learns the
 *   winner's event id here and becomes a duplicate instead of being stored. An expired key is
 *   taken over. A first event stored by this statement is stored with its duplicates in the
 *   batch counted. Those of an event stored before are left to countDuplicate: updating events
 *   here made every batch start an UPDATE of events, with its statement trigger, that almost
 *   none needed (a tenth of the database's CPU for a batch of one).
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
  deadline: number,
): Promise<StoredEvent[]> {
  const { rows } = await db.query<{
    id: string | null;
    outcome: StoredEvent['outcome'];
    first_id: string | null;
    first_in_batch: boolean;
  }>(
    `with limits as materialized (
       select set_config('hookprompt.commit_deadline', $11, true),
              set_config('lock_timeout', $12, true)
     ),
     batch as (
       select batch.*,
              convert_from(substring($4::bytea from payload_start for payload_bytes), 'UTF8')
                as payload,
              headers.headers,
              case when channels.id is null then 'channel_not_found'
                   when not channels.enabled then 'channel_disabled'
              end as refusal
       from unnest($1::bigint[], $2::bigint[], $3::text[], $5::text[], $6::integer[],
                   $8::text[], $9::text[], $10::boolean[], $13::integer[], $14::integer[])
              with ordinality
              as batch(workspace_id, channel_id, token_hash, dedup_key, window_s, sender_ip,
                       thread_key, repeat, payload_start, payload_bytes, position)
       join jsonb_array_elements($7::jsonb) with ordinality as headers(headers, position)
         on headers.position = batch.position
       left join channels on channels.id = batch.channel_id
                         and channels.webhook_token_hash = batch.token_hash
                         and channels.deleted_at is null
       -- Evaluated once, before the first row: the limits hold for every row after.
       where exists (select from limits)
     ),
     room as (
       select id,
              chat_quota - (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end) as room
       from workspaces where id in (select workspace_id from batch where refusal is null)
       order by id
       for update
     ),
     -- Keys already claimed, looked up only when some workspace has less room than the batch has
     -- events: then a duplicate must not take the place of an event that fits. With room for
     -- every event, claimed below finds the duplicates among them anyway (their claim
     -- conflicts with the stored key), and they use no quota either way.
     seen as (
       select k.channel_id, k.key, k.event_id from dedup_keys k
       where (k.channel_id, k.key) in (select channel_id, dedup_key from batch
                                       where dedup_key is not null and refusal is null)
         and k.expires_at > now()
         and (select min(room) from room) < (select count(*) from batch)
     ),
     keyed as (
       select batch.*, seen.event_id as seen_event_id
       from batch
       left join seen on seen.channel_id = batch.channel_id and seen.key = batch.dedup_key
     ),
     decided as (
       select keyed.*,
              case when refusal is not null then refusal
                   when seen_event_id is not null then 'duplicate'
                   when repeat then 'repeat'
                   when row_number() over (partition by keyed.workspace_id,
                                             refusal is null and seen_event_id is null and not repeat
                                           order by keyed.position) <= coalesce(room.room, 0)
                     then 'accepted'
                   else 'quota_exceeded'
              end as outcome
       from keyed left join room on room.id = keyed.workspace_id
     ),
     numbered as (
       select decided.*,
              case when outcome not in ('channel_not_found', 'duplicate')
                then nextval('events_id_seq'::regclass) end as id
       from decided
     ),
     claimed as (
       insert into dedup_keys as k (channel_id, key, event_id, expires_at)
       select channel_id, dedup_key, id, now() + make_interval(secs => window_s)
       from numbered where outcome = 'accepted' and dedup_key is not null
       on conflict (channel_id, key) do update set
         event_id = case when k.expires_at <= now() then excluded.event_id else k.event_id end,
         expires_at = case when k.expires_at <= now() then excluded.expires_at else k.expires_at end
       returning k.channel_id, k.key, k.event_id
     ),
     final as (
       select numbered.*,
              case when outcome = 'accepted' and claimed.event_id <> numbered.id then 'duplicate'
                   when outcome = 'repeat' and claimed.event_id is not null then 'duplicate'
                   when outcome = 'repeat' then 'quota_exceeded'
                   else outcome
              end as final_outcome,
              case when outcome = 'duplicate' then seen_event_id
                   when outcome in ('accepted', 'repeat') and claimed.event_id <> numbered.id
                     then claimed.event_id
              end as first_id
       from numbered
       left join claimed on claimed.channel_id = numbered.channel_id
                        and claimed.key = numbered.dedup_key
     ),
     repeats as (
       select first_id, count(*)::integer as n from final
       where final_outcome = 'duplicate' group by first_id
     ),
     spent as (
       update workspaces w set
         chats_used = (case when w.quota_period_start < ${CURRENT_MONTH_START} then 0 else w.chats_used end)
                      + per_workspace.chats,
         quota_period_start = ${CURRENT_MONTH_START}
       from (select workspace_id, count(*)::integer as chats
             from final where final_outcome = 'accepted' group by workspace_id) as per_workspace
       where w.id = per_workspace.workspace_id
     ),
     stored as (
       insert into events (id, workspace_id, channel_id, status, payload, error, completed_at,
                           headers, sender_ip, duplicates, thread_key)
       overriding system value
       select final.id, workspace_id, channel_id,
              case when final_outcome = 'accepted' then 'pending' else 'rejected' end,
              payload,
              case when final_outcome = 'accepted' then null else final_outcome end,
              case when final_outcome = 'accepted' then null else now() end,
              headers, sender_ip, coalesce(repeats.n, 0),
              case when final_outcome = 'accepted' then thread_key end
       from final left join repeats on repeats.first_id = final.id
       where final_outcome in ('accepted', 'quota_exceeded', 'channel_disabled')
     )
     select final.id, final.final_outcome as outcome, final.first_id,
            first.id is not null as first_in_batch
     from final
     left join final first on first.id = final.first_id and first.final_outcome = 'accepted'
     order by final.position`,
    [
      events.map((e) => e.channel.workspace_id),
      events.map((e) => e.channel.id),
      events.map((e) => e.channel.webhook_token_hash),
      // The payloads' bytes one after the other, each cut out by its start and length ($13,
      // $14). Not a text[]: the driver escapes array elements in JavaScript, character by
      // character. Not a JSON array of strings either: PostgreSQL read that whole array twice
      // (checking it, then taking it apart) and unescaped it a character at a time, 15 µs of
      // its CPU per 1 KB payload against 5 µs for this (and the receiver's 13 against 7).
      Buffer.concat(events.map((e) => e.payload)),
      events.map((e) => e.dedupKey ?? null),
      events.map((e) => e.channel.dedup.window_s),
      // The headers as a JSON array, each element read once: `->>` on the elements of one
      // array of whole events had read each element again for every field.
      JSON.stringify(events.map((e) => e.headers)),
      events.map((e) => e.senderIp ?? null),
      events.map((e) => e.threadKey ?? null),
      repeatsInBatch(events),
      new Date(deadline).toISOString(),
      `${Math.max(1, Math.ceil(deadline - Date.now()))}ms`,
      ...payloadSlices(events),
    ],
    // Planning this statement took the database more time than running it for 50 events.
    { name: 'store-event-batch', deadline, commitsByDeadline: true },
  );
  return rows.map((row): StoredEvent => {
    if (row.outcome !== 'duplicate') return { outcome: row.outcome, eventId: row.id ?? undefined };
    const firstEventId = row.first_id as string;
    return {
      outcome: 'duplicate',
      firstEventId,
      // Stored by this statement: it is as it was stored, and its duplicates are counted in it.
      first: row.first_in_batch
        ? { id: firstEventId, status: 'pending', reply: null, error: null }
        : undefined,
    };
  });
}

/** Where each event's payload starts in the concatenated payloads (from 1), and its length. */
function payloadSlices(events: IncomingEvent[]): [number[], number[]] {
  const starts: number[] = [];
  const lengths: number[] = [];
  let start = 1;
  for (const { payload } of events) {
    starts.push(start);
    lengths.push(payload.length);
    start += payload.length;
  }
  return [starts, lengths];
}

/**
 * For each event, whether an earlier event of the batch has its dedup key on the same channel
 * URL: it then shares that event's fate. Marked here rather than by a window function in the
 * statement, which cost the database more per keyed event.
 */
function repeatsInBatch(events: IncomingEvent[]): boolean[] {
  const keys = new Set<string>();
  return events.map(({ channel, dedupKey }) => {
    if (dedupKey === undefined) return false;
    const key = `${channel.id} ${channel.webhook_token_hash} ${dedupKey}`;
    if (keys.has(key)) return true;
    keys.add(key);
    return false;
  });
}

/**
 * Counts one more duplicate on an event stored before the batch that found the duplicate (by an
 * earlier batch, or by another transaction while it ran), and reads the event's state for the
 * duplicate's answer.
 */
export async function countDuplicate(
  db: Queryable,
  eventId: string,
  deadline?: number,
): Promise<FirstEvent> {
  // One statement, committed on its own: no transaction around it to open and close.
  const { rows } = await db.query<FirstEvent>(
    `update events set duplicates = duplicates + 1 where id = $1
     returning id, status, reply, error`,
    [eventId],
    { deadline },
  );
  return rows[0] ?? { id: eventId, status: 'pending', reply: null, error: null };
}

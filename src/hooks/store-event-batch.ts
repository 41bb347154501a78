import type { Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';
import { BUDGET_RESETS_AT, overBudget } from '../spend/budget-sql.js';
import {
  batchParameters,
  P,
  PARAMETER_NAMES,
  type IncomingEvent,
} from './store-event-batch-parameters.js';
import { storedEvent, type ResultRow, type StoredEvent } from './store-event-batch-rows.js';

export type { IncomingEvent } from './store-event-batch-parameters.js';
export type { FirstEvent, QuotaState, StoredEvent } from './store-event-batch-rows.js';

/**
 * How the statement finds the keys that stored events hold:
 * - `looked-up`: it looks the batch's keys up first, and decides their requests (a duplicate,
 *   422 for another body, a key past its window freed and claimed again);
 * - `on-insert`: the insert of a key an event holds fails the whole statement (see isKeyTaken).
 *   Senders seldom repeat a request, and the lookup costs every keyed event. Keys are still
 *   looked up in a workspace short of room: a request refused for the quota or the budget
 *   stores no key, so no insert would find that it repeats an accepted one.
 */
export type KeyCheck = 'looked-up' | 'on-insert';

/** Which requests of the batch have their keys looked up, by KeyCheck. */
const KEYS_LOOKED_UP: Record<KeyCheck, string> = {
  'looked-up': 'dedup_key is not null and refusal is null',
  'on-insert': `dedup_key is not null and refusal is null
                                        and workspace_id in (select id from short_of_room)`,
};

/**
 * The one writer of the receiver: every request of a batch, accepted or refused, in one statement
 * that commits on its own by its deadline or not at all. It decides, in the order senders rely on,
 * what the pipeline leaves to it: duplicate (200, or 422 for another body), filtered (200, the
 * pipeline's mark), quota (403), budget (403), stored (200). Built once per KeyCheck: a new string per call would be flattened and compared again by
 * the driver.
 */
const storeEventBatchStatement = (keys: KeyCheck) => `
with
  -- The deadline is named before any row is read: a COMMIT reaching the database after it fails
  -- (migrations/0006), and the wait for a quota row ends with it (lock_timeout).
  limits as materialized (
    select set_config('hookprompt.commit_deadline', ${P.commitDeadline}, true),
           set_config('lock_timeout', ${P.lockTimeout}, true)
  ),
  -- The payloads turned into bytes once; each request's payload is a slice of them.
  payloads as materialized (select convert_to(${P.payloads}::text, 'UTF8') as bytes),
  requests as (
    select request.*, headers.headers, refused.code as refusal, refused.truncated,
           refused.detail as refusal_detail
    from unnest(${P.workspaceIds}::bigint[], ${P.channelIds}::bigint[], ${P.tokenHashes}::text[],
                ${P.payloadStarts}::integer[], ${P.payloadBytes}::integer[],
                ${P.keptBytes}::integer[], ${P.senderIps}::text[], ${P.threadKeys}::text[],
                ${P.dedupKeys}::text[], ${P.windows}::integer[], ${P.bodyHashes}::text[],
                ${P.keyUses}::text[], ${P.filters}::text[], ${P.traceIds}::text[],
                ${P.traceparents}::text[])
           with ordinality
           as request(workspace_id, channel_id, token_hash, payload_start, payload_bytes,
                      kept_bytes, sender_ip, thread_key, dedup_key, window_s, body_hash, key_use,
                      filtered_by, trace_id, traceparent, position)
    join jsonb_array_elements(${P.headers}::jsonb) with ordinality as headers(headers, position)
      on headers.position = request.position
    left join jsonb_to_recordset(${P.refusals}::jsonb)
           as refused(position bigint, code text, truncated boolean, detail text)
      on refused.position = request.position
    -- Evaluated once, before the first row: the limits hold for every row after.
    where exists (select from limits)
  ),
  -- The channel as committed now. The pipeline may have checked a cached row: what it let
  -- through is not stored for a channel disabled, deleted or given a new URL since; a refusal
  -- only needs its channel to exist.
  channel_checked as (
    select requests.*,
           channels.id is null or (requests.refusal is null and not channels.enabled)
             as channel_changed
    from requests
    left join channels on channels.id = requests.channel_id
                      and channels.webhook_token_hash = requests.token_hash
                      and channels.deleted_at is null
  ),
  -- The workspace rows are locked in id order, so concurrent batches cannot deadlock; the room
  -- and the budget are read from the locked rows, so no instance accepts past the quota, nor
  -- while the month's spend has reached the budget.
  room as (
    select id, chat_quota,
           chat_quota - (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end)
             as room,
           ${overBudget('workspaces')} as over_budget,
           monthly_budget_usd::float8 as monthly_budget_usd
    from workspaces
    where id in (select workspace_id from channel_checked
                 where refusal is null and not channel_changed and filtered_by is null)
    order by id
    for update
  ),
  -- Workspaces that may not take every request of the batch (too little of the quota left, or
  -- the budget used up): their keys are looked up whatever the KeyCheck, so that a repeat of an
  -- accepted request is its duplicate there too, never a 403.
  short_of_room as (
    select room.id from room
    where room.over_budget
       or room.room < (select count(*) from channel_checked
                       where channel_checked.workspace_id = room.id)
  ),
  -- Stored events holding a key of the batch: within its window the key makes the request a
  -- duplicate (or 422); past it, the key is freed below and claimed again.
  key_holders as (
    select id, channel_id, dedup_key, dedup_body_hash, dedup_expires_at > now() as open,
           status, reply, error
    from events
    where (channel_id, dedup_key) in (select channel_id, dedup_key from requests
                                      where ${KEYS_LOOKED_UP[keys]})
      and dedup_key is not null
  ),
  -- Duplicates before the quota: they use none of it; then what accept_when filtered (stored,
  -- using none either); the budget after the quota. A repeat (or another body under the key)
  -- of an earlier request of the batch waits for that request's verdict, below.
  verdicts as (
    select channel_checked.*, room.chat_quota, room.monthly_budget_usd,
           key_holders.id as holder_id, key_holders.open as holder_open,
           key_holders.status as holder_status, key_holders.reply as holder_reply,
           key_holders.error as holder_error,
           case
             when channel_changed then 'channel_changed'
             when refusal is not null then 'rejected'
             when key_holders.open and (body_hash is null or dedup_body_hash is null
                                        or dedup_body_hash = decode(body_hash, 'hex'))
               then 'duplicate'
             when key_holders.open then 'key_reused'
             when key_use is not null then key_use
             when filtered_by is not null then 'filtered'
             when row_number() over (partition by channel_checked.workspace_id,
                                       not channel_changed and refusal is null
                                       and key_holders.open is not true and key_use is null
                                       and filtered_by is null
                                     order by channel_checked.position)
                  > coalesce(room.room, 0)
               then 'quota_exceeded'
             when room.over_budget then 'budget_exceeded'
             else 'accepted'
           end as verdict
    from channel_checked
    left join key_holders on key_holders.channel_id = channel_checked.channel_id
                         and key_holders.dedup_key = channel_checked.dedup_key
    left join room on room.id = channel_checked.workspace_id
  ),
  -- A repeat is a duplicate of the batch's first request with its key once that is stored;
  -- another body under the key is then 422. Either shares a refusal of the first; a first
  -- stored filtered holds its key as an accepted one does.
  outcomes as (
    select verdicts.*, first_of_key.position as first_position,
           case when verdicts.verdict not in ('repeat', 'reused') then verdicts.verdict
                when first_of_key.verdict not in ('accepted', 'filtered') then first_of_key.verdict
                when verdicts.verdict = 'repeat' then 'duplicate'
                else 'key_reused'
           end as outcome
    from verdicts
    left join verdicts first_of_key on verdicts.key_use is not null
                                   and first_of_key.key_use is null
                                   and first_of_key.channel_id = verdicts.channel_id
                                   and first_of_key.token_hash = verdicts.token_hash
                                   and first_of_key.dedup_key = verdicts.dedup_key
  ),
  -- Ids are drawn per request, so results come back in the batch's order, not the insert's.
  numbered as (
    select outcomes.*,
           case when outcome in ('accepted', 'rejected', 'quota_exceeded', 'budget_exceeded',
                                 'key_reused', 'filtered')
             then nextval('events_id_seq'::regclass) end as id
    from outcomes
  ),
  -- Stored events whose key the batch met count its duplicates, and a key past its window is
  -- freed for the request that claims it below (migrations/0019: only a batch that met one
  -- pays for an update of events).
  held_keys as (
    select events_hold_keys(array_agg(holder_id), array_agg(duplicates), array_agg(open)) as n
    from (select holder_id, holder_open as open,
                 count(*) filter (where verdict = 'duplicate')::integer as duplicates
          from numbered where holder_id is not null
          group by holder_id, holder_open) as met
    where duplicates > 0 or not open
    having count(*) > 0
  ),
  -- A first request stored with its key counts the repeats of the batch as its duplicates.
  repeats as (
    select first_position, count(*)::integer as n
    from numbered where verdict = 'repeat' and outcome = 'duplicate'
    group by first_position
  ),
  -- Each accepted request with a key claims it by storing its event: the unique index lets one
  -- of any number of concurrent claims in. One that lost the race to another transaction fails
  -- the statement (see EventBatchStore); 'on conflict' would cost every keyed event more.
  stored as (
    insert into events (id, workspace_id, channel_id, status, payload, payload_truncated, error,
                        completed_at, headers, sender_ip, duplicates, thread_key, dedup_key,
                        dedup_expires_at, dedup_body_hash, trace_id, traceparent,
                        refusal_detail)
    overriding system value
    select id, workspace_id, channel_id,
           case outcome when 'accepted' then 'pending' when 'filtered' then 'filtered'
                        else 'rejected' end,
           -- Only an accepted event keeps its whole body; the others its first 64 KB.
           convert_from(substring((select bytes from payloads) from payload_start for
                                  case when outcome = 'accepted' then payload_bytes
                                       else coalesce(kept_bytes, payload_bytes) end),
                        'UTF8'),
           case when outcome = 'rejected' then truncated
                else outcome <> 'accepted' and kept_bytes is not null end,
           case outcome when 'accepted' then null
                        when 'filtered' then filtered_by
                        when 'rejected' then refusal
                        when 'key_reused' then 'idempotency_key_reused'
                        else outcome end,
           case when outcome <> 'accepted' then now() end,
           headers, sender_ip, coalesce(repeats.n, 0),
           case when outcome = 'accepted' then thread_key end,
           case when outcome in ('accepted', 'filtered') then dedup_key end,
           case when outcome in ('accepted', 'filtered')
             then now() + make_interval(secs => window_s) end,
           case when outcome in ('accepted', 'filtered') then decode(body_hash, 'hex') end,
           trace_id, traceparent,
           case when outcome = 'rejected' then refusal_detail end
    from numbered
    left join repeats on repeats.first_position = numbered.position
    where id is not null
      -- After held_keys (an init plan runs before the first row): a key freed there is
      -- claimed here.
      and (select count(*) from held_keys) >= 0
  ),
  -- A month that has begun since the last accepted event counts from 0.
  spent as (
    update workspaces set
      chats_used = (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end)
                   + used.chats,
      quota_period_start = ${CURRENT_MONTH_START}
    from (select workspace_id, count(*)::integer as chats
          from numbered where outcome = 'accepted' group by workspace_id) as used
    where workspaces.id = used.workspace_id
  )
select numbered.id, numbered.outcome,
       case when numbered.verdict in ('duplicate', 'key_reused') then numbered.holder_id
            else first_of_key.id end as first_id,
       -- A first event stored by this statement is as it was stored.
       case when numbered.verdict = 'duplicate' then numbered.holder_status
            when first_of_key.outcome = 'filtered' then 'filtered'
            else 'pending' end as first_status,
       case when numbered.verdict = 'duplicate' then numbered.holder_reply end as first_reply,
       case when numbered.verdict = 'duplicate' then numbered.holder_error end as first_error,
       numbered.chat_quota, numbered.monthly_budget_usd,
       case when numbered.outcome in ('quota_exceeded', 'budget_exceeded')
         then ${BUDGET_RESETS_AT} end as resets_at
from numbered
left join numbered first_of_key on first_of_key.position = numbered.first_position
order by numbered.position`;

const STORE_EVENT_BATCH: Record<KeyCheck, string> = {
  'looked-up': storeEventBatchStatement('looked-up'),
  'on-insert': storeEventBatchStatement('on-insert'),
};

/**
 * Stores a batch in one statement, one round trip with no BEGIN or COMMIT to wait for; results
 * in the order of `events`. A key another transaction has just stored (a race between
 * instances), or with `on-insert` any key an event holds, fails the whole statement, and nothing
 * of it is stored (see isKeyTaken). Inside a transaction of the caller's it names that
 * transaction's deadline.
 */
export async function storeEventBatch(
  db: Queryable,
  events: IncomingEvent[],
  deadline: number,
  keys: KeyCheck = 'looked-up',
): Promise<StoredEvent[]> {
  const parameters = batchParameters(events, deadline);
  const { rows } = await db.query<ResultRow>(
    STORE_EVENT_BATCH[keys],
    PARAMETER_NAMES.map((name) => parameters[name]),
    // Prepared once per connection: planning it costs more than running it.
    { name: `store-event-batch-${keys}`, deadline, commitsByDeadline: true },
  );
  return rows.map(storedEvent);
}

/**
 * Stores the receiver's batches. Keys are found taken on insert while none was lately: a batch
 * that meets one fails and is sent again with its keys looked up, as are the batches of the next
 * LOOK_UP_AFTER_TAKEN_MS, so a sender that repeats its requests costs one failed statement now
 * and then. A batch that loses a race for a key to another instance is sent again too, and finds
 * the key's event. Not for a batch inside a transaction of the caller's: a failed statement ends it.
 */
export class EventBatchStore {
  private lastTakenKeyAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly db: Queryable) {}

  async store(events: IncomingEvent[], deadline: number): Promise<StoredEvent[]> {
    for (;;) {
      const recently = Date.now() - this.lastTakenKeyAt < LOOK_UP_AFTER_TAKEN_MS;
      try {
        return await storeEventBatch(
          this.db,
          events,
          deadline,
          recently ? 'looked-up' : 'on-insert',
        );
      } catch (error) {
        if (!isKeyTaken(error)) throw error;
        this.lastTakenKeyAt = Date.now();
      }
    }
  }
}

const LOOK_UP_AFTER_TAKEN_MS = 60_000;

/** The error of a key claimed by another transaction meanwhile (SQLSTATE 23505 on its index). */
export function isKeyTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'events_dedup_key_idx';
}

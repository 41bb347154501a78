import type { Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';
import type { ReceivingChannel } from './ingest-repo.js';

export interface IncomingEvent {
  channel: ReceivingChannel;
  /** The body as text, byte for byte (the receiver has checked it is UTF-8 JSON). */
  payload: string;
  /** As the event keeps them (see keptHeaders). */
  headers: Record<string, string>;
  senderIp: string | undefined;
  /** The request's dedup key, or undefined when it cannot be a duplicate. */
  dedupKey: string | undefined;
  /**
   * The body's SHA-256 (hex), kept with a key from a header (see keyedBodyHash): a request with
   * the key and another body is no duplicate. Absent: any body with the key is a duplicate.
   */
  bodyHash?: string;
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
 * What became of one event of a batch: `eventId` is the stored event (none for a 404). A
 * duplicate of an event this same batch stored gives it as `first`. `key_taken`: the request's
 * key is held by an event stored before (by an earlier batch, or by another transaction while
 * this one ran), or an earlier request of this batch has it with another body; nothing was
 * stored for it, and countDuplicateOfKey answers it.
 */
export type StoredEvent =
  | {
      outcome: 'accepted' | 'quota_exceeded' | 'channel_disabled' | 'channel_not_found';
      eventId?: string;
    }
  | { outcome: 'duplicate'; first: FirstEvent }
  | { outcome: 'key_taken' };

/**
 * How a batch's accepted keys are claimed:
 * - `checked`: `on conflict do nothing` stores no event for a key another event holds (stored
 *   before, or by a transaction that committed while this one waited for it), and that request
 *   comes out `key_taken`;
 * - `unchecked`: a plain insert, which fails the whole statement on such a key (a unique
 *   violation of events_dedup_key_idx, see isKeyTaken). `on conflict` makes every row it inserts
 *   a speculative insertion (a check of the index before the insert, a lock, one more WAL
 *   record): a keyed event cost PostgreSQL 6.4 µs of CPU more than one without a key that way,
 *   3.9 µs more with a plain insert (batches of 32).
 */
export type KeyClaim = 'checked' | 'unchecked';

/**
 * The statement of storeEventBatch, built once per KeyClaim: a template literal with
 * substitutions is a new string on every call, which the driver then flattens and compares with
 * the prepared one. At 500 webhooks/s that string was most of what reached V8's old generation,
 * and so brought its full collections into the latency tail (docs/scaling.md).
 */
const storeEventBatchStatement = (
  claim: KeyClaim,
) => `with payloads as materialized (select convert_to($4::text, 'UTF8') as bytes),
  limits as materialized (
    select set_config('hookprompt.commit_deadline', $11, true),
           set_config('lock_timeout', $12, true)
  ),
  batch as (
    select batch.*,
           convert_from(substring((select bytes from payloads) from payload_start for payload_bytes),
                        'UTF8')
             as payload,
           headers.headers,
           case when channels.id is null then 'channel_not_found'
                when not channels.enabled then 'channel_disabled'
           end as refusal
    from unnest($1::bigint[], $2::bigint[], $3::text[], $5::text[], $6::integer[],
                $8::text[], $9::text[], $10::boolean[], $13::integer[], $14::integer[],
                $15::text[])
           with ordinality
           as batch(workspace_id, channel_id, token_hash, dedup_key, window_s, sender_ip,
                    thread_key, repeat, payload_start, payload_bytes, body_hash, position)
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
  -- Keys held by events stored before, looked up only when some workspace has less room than
  -- the batch has events: then a duplicate must not take the place of an event that fits.
  -- With room for every event, the insert below finds the duplicates among them anyway (they
  -- conflict with the stored key), and they use no quota either way.
  seen as (
    select events.channel_id, events.dedup_key from events
    where (events.channel_id, events.dedup_key) in (
            -- The room test filters the batch's keys: on the scan of events, where PostgreSQL
            -- placed it before, every key of the batch was gathered and hashed first.
            select channel_id, dedup_key from batch
            where dedup_key is not null and refusal is null
              and (select min(room) from room) < (select count(*) from batch))
      and events.dedup_key is not null
      and events.dedup_expires_at > now()
  ),
  decided as (
    select batch.*,
           case when refusal is not null then refusal
                when seen.dedup_key is not null then 'key_taken'
                when repeat then 'repeat'
                when row_number() over (partition by batch.workspace_id,
                                          refusal is null and seen.dedup_key is null and not repeat
                                        order by batch.position) <= coalesce(room.room, 0)
                  then 'accepted'
                else 'quota_exceeded'
           end as outcome
    from batch
    left join seen on seen.channel_id = batch.channel_id and seen.dedup_key = batch.dedup_key
    left join room on room.id = batch.workspace_id
  ),
  numbered as (
    select decided.*,
           case when outcome not in ('channel_not_found', 'key_taken')
             then nextval('events_id_seq'::regclass) end as id
    from decided
  ),
  -- The batch's later requests with the key of an accepted one, counted as its duplicates
  -- when it is stored (repeatsInBatch marks them).
  repeats as (
    select channel_id, dedup_key, count(*)::integer as n
    from numbered where outcome = 'repeat' group by channel_id, dedup_key
  ),
  -- Each accepted request with a key claims it by storing its event. The unique index on the
  -- key serialises every transaction storing one key: one that lost the race to another
  -- instance's transaction waits for it to commit, then stores nothing and learns so here
  -- (or, claiming unchecked, fails). An insert of its own, so that events without a key never
  -- pay for 'on conflict'.
  claimed as (
    insert into events (id, workspace_id, channel_id, status, payload, headers, sender_ip,
                        duplicates, thread_key, dedup_key, dedup_expires_at, dedup_body_hash)
    overriding system value
    select numbered.id, workspace_id, numbered.channel_id, 'pending', payload, headers,
           sender_ip, coalesce(repeats.n, 0), thread_key, numbered.dedup_key,
           now() + make_interval(secs => window_s), decode(body_hash, 'hex')
    from numbered
    left join repeats on repeats.channel_id = numbered.channel_id
                     and repeats.dedup_key = numbered.dedup_key
    where outcome = 'accepted' and numbered.dedup_key is not null
    ${claim === 'checked' ? 'on conflict (channel_id, dedup_key) where dedup_key is not null do nothing' : ''}
    returning id, channel_id, dedup_key
  ),
  final as (
    select numbered.*,
           case when numbered.dedup_key is null or numbered.outcome not in ('accepted', 'repeat')
                  then numbered.outcome
                when claimed.id = numbered.id then 'accepted'
                when claimed.id is not null then 'duplicate'
                when claim.id is not null then 'key_taken'
                else 'quota_exceeded'
           end as final_outcome,
           claimed.id as claimed_id
    from numbered
    left join numbered claim on claim.outcome = 'accepted'
                            and claim.channel_id = numbered.channel_id
                            and claim.dedup_key = numbered.dedup_key
    left join claimed on claimed.channel_id = numbered.channel_id
                     and claimed.dedup_key = numbered.dedup_key
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
  -- Every other event: accepted without a key, or refused (a refused event claims no key).
  stored as (
    insert into events (id, workspace_id, channel_id, status, payload, error, completed_at,
                        headers, sender_ip, thread_key)
    overriding system value
    select id, workspace_id, channel_id,
           case when final_outcome = 'accepted' then 'pending' else 'rejected' end,
           payload,
           case when final_outcome = 'accepted' then null else final_outcome end,
           case when final_outcome = 'accepted' then null else now() end,
           headers, sender_ip,
           case when final_outcome = 'accepted' then thread_key end
    from final
    where final_outcome in ('quota_exceeded', 'channel_disabled')
       or (final_outcome = 'accepted' and dedup_key is null)
  )
  select id, final_outcome as outcome, claimed_id from final order by position`;

const STORE_EVENT_BATCH = {
  checked: storeEventBatchStatement('checked'),
  unchecked: storeEventBatchStatement('unchecked'),
};

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
 * - Duplicates are decided before the quota, and use none of it. A request whose key an earlier
 *   request of the batch has shares that request's fate; with another body (both known), it is
 *   not sent and comes back `key_taken`. The other keyed requests that fit the quota store
 *   their event with its key and body hash (migrations/0015, 0018), as `claim` says (KeyClaim): one
 *   whose key another event holds is `key_taken` and spends no quota, or, claimed unchecked,
 *   fails the statement, and nothing of the batch is stored (see EventBatchStore). A first event
 *   stored by this statement is stored with its duplicates in the batch counted. Those of an
 *   event stored before are left to countDuplicateOfKey: an `on conflict do update` here would
 *   make every batch run events' update triggers too, and a second statement is paid only by
 *   duplicates.
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
  claim: KeyClaim = 'checked',
): Promise<StoredEvent[]> {
  const uses = keyUsesInBatch(events);
  // A request that uses an earlier one's key for another body is no repeat of it: it is left
  // out, and answered once the batch is committed, against whatever event then holds the key.
  if (!uses.includes('reused')) return storeSent(db, events, uses, deadline, claim);
  const stored = await storeSent(
    db,
    events.filter((_, i) => uses[i] !== 'reused'),
    uses.filter((use) => use !== 'reused'),
    deadline,
    claim,
  );
  let next = 0;
  return uses.map((use) =>
    use === 'reused' ? { outcome: 'key_taken' } : (stored[next++] as StoredEvent),
  );
}

async function storeSent(
  db: Queryable,
  events: IncomingEvent[],
  uses: KeyUse[],
  deadline: number,
  claim: KeyClaim,
): Promise<StoredEvent[]> {
  const { rows } = await db.query<{
    id: string | null;
    outcome: StoredEvent['outcome'];
    claimed_id: string | null;
  }>(
    STORE_EVENT_BATCH[claim],
    [
      events.map((e) => e.channel.workspace_id),
      events.map((e) => e.channel.id),
      events.map((e) => e.channel.webhook_token_hash),
      // The payloads one after the other as one text, turned into bytes once by the statement
      // and cut by byte offsets ($13, $14). Not a text[]: the driver escapes array elements in
      // JavaScript, character by character. Not a JSON array of strings: PostgreSQL read that
      // whole array twice and unescaped it a character at a time (15 µs of its CPU per 1 KB
      // payload, against 5 µs). Not a Buffer (bytea), which costs PostgreSQL the same as this:
      // with Buffers the receiver's ArrayBuffer memory grew to 42 MB at 128 connections
      // (3 MB with text) and at 500 webhooks/s it made V8 run a full collection every second
      // or two (none in 20 s with text), each a pause of 2–13 ms in the latency tail.
      events.map((e) => e.payload).join(''),
      events.map((e) => e.dedupKey ?? null),
      events.map((e) => e.channel.dedup.window_s),
      // The headers as a JSON array, each element read once: `->>` on the elements of one
      // array of whole events had read each element again for every field.
      JSON.stringify(events.map((e) => e.headers)),
      events.map((e) => e.senderIp ?? null),
      events.map((e) => e.threadKey ?? null),
      uses.map((use) => use === 'repeat'),
      new Date(deadline).toISOString(),
      `${Math.max(1, Math.ceil(deadline - Date.now()))}ms`,
      ...payloadSlices(events),
      events.map((e) => e.bodyHash ?? null),
    ],
    // Planning this statement took the database more time than running it for 50 events.
    { name: `store-event-batch-${claim}`, deadline, commitsByDeadline: true },
  );
  return rows.map((row): StoredEvent => {
    if (row.outcome === 'key_taken') return { outcome: 'key_taken' };
    if (row.outcome !== 'duplicate') return { outcome: row.outcome, eventId: row.id ?? undefined };
    // Stored by this statement: it is as it was stored, and its duplicates are counted in it.
    const first = { id: row.claimed_id as string, status: 'pending', reply: null, error: null };
    return { outcome: 'duplicate', first };
  });
}

/**
 * Stores the receiver's batches (storeEventBatch), claiming their keys unchecked while no key
 * has been found taken lately: senders seldom repeat a request, and a batch with none of their
 * repeats then costs PostgreSQL less. A batch that meets a taken key is stored again, checked,
 * and so are the batches of the next CHECKED_AFTER_TAKEN_MS, so that a sender repeating its
 * requests costs one failed statement now and then rather than one per batch.
 *
 * Not for a batch inside a transaction of the caller's: a failed statement ends it.
 */
export class EventBatchStore {
  private lastTakenKeyAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly db: Queryable) {}

  async store(events: IncomingEvent[], deadline: number): Promise<StoredEvent[]> {
    if (Date.now() - this.lastTakenKeyAt >= CHECKED_AFTER_TAKEN_MS) {
      try {
        return await storeEventBatch(this.db, events, deadline, 'unchecked');
      } catch (error) {
        if (!isKeyTaken(error)) throw error;
      }
      this.lastTakenKeyAt = Date.now();
    }
    const stored = await storeEventBatch(this.db, events, deadline, 'checked');
    if (stored.some((event) => event.outcome === 'key_taken')) this.lastTakenKeyAt = Date.now();
    return stored;
  }
}

const CHECKED_AFTER_TAKEN_MS = 60_000;

/** The error of an unchecked claim of a key another event holds (SQLSTATE 23505 on its index). */
export function isKeyTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'events_dedup_key_idx';
}

/** Where each event's payload starts in the concatenated payloads' bytes (from 1), and its length in bytes. */
function payloadSlices(events: IncomingEvent[]): [number[], number[]] {
  const starts: number[] = [];
  const lengths: number[] = [];
  let start = 1;
  for (const { payload } of events) {
    const bytes = Buffer.byteLength(payload);
    starts.push(start);
    lengths.push(bytes);
    start += bytes;
  }
  return [starts, lengths];
}

/**
 * How an event of a batch uses its dedup key: `first` of the batch with it on its channel URL;
 * a `repeat` of the first (the same body, or a key not kept with its body), which then shares
 * that event's fate; the key `reused` for another body. Marked here rather than by a window
 * function in the statement, which cost the database more per keyed event.
 */
type KeyUse = 'none' | 'first' | 'repeat' | 'reused';

function keyUsesInBatch(events: IncomingEvent[]): KeyUse[] {
  const firstBodies = new Map<string, string | undefined>();
  return events.map(({ channel, dedupKey, bodyHash }) => {
    if (dedupKey === undefined) return 'none';
    const key = `${channel.id} ${channel.webhook_token_hash} ${dedupKey}`;
    if (!firstBodies.has(key)) {
      firstBodies.set(key, bodyHash);
      return 'first';
    }
    const firstBody = firstBodies.get(key);
    return firstBody === undefined || bodyHash === undefined || firstBody === bodyHash
      ? 'repeat'
      : 'reused';
  });
}

/**
 * Answers a request whose key an event stored before holds (`key_taken`): counts one more
 * duplicate on that event and reads its state, in one statement committed on its own. When that
 * event was accepted with another body (both bodies' hashes known), nothing is counted and it
 * comes back with `sameBody: false`. When the key's window has passed, it is freed instead (the
 * old event keeps everything but its key) and nothing is returned: the request is then not a
 * duplicate, and is stored again. Nothing is returned either when the event has gone
 * (retention), which frees its key too.
 */
export async function countDuplicateOfKey(
  db: Queryable,
  event: IncomingEvent,
  deadline?: number,
): Promise<(FirstEvent & { sameBody: boolean }) | undefined> {
  const { rows } = await db.query<FirstEvent & { same_body: boolean }>(
    `with freed as (
       update events set dedup_key = null, dedup_expires_at = null, dedup_body_hash = null
       where channel_id = $1 and dedup_key = $2 and dedup_expires_at <= now()
     ),
     counted as (
       update events set duplicates = duplicates + 1
       where channel_id = $1 and dedup_key = $2 and dedup_expires_at > now()
         and ($3::text is null or dedup_body_hash is null or dedup_body_hash = decode($3, 'hex'))
       returning id, status, reply, error
     )
     select id, status, reply, error, true as same_body from counted
     union all
     select id, status, reply, error, false from events
     where channel_id = $1 and dedup_key = $2 and dedup_expires_at > now()
       and dedup_body_hash <> decode($3, 'hex')`,
    [event.channel.id, event.dedupKey, event.bodyHash ?? null],
    { deadline },
  );
  const row = rows[0];
  if (!row) return undefined;
  const { same_body: sameBody, ...first } = row;
  return { ...first, sameBody };
}

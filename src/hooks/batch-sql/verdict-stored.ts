import { CURRENT_MONTH_START } from '../../db/sql.js';

/** What no earlier verdict decided is stored, pending its reply. */
export const ACCEPTED = `else 'accepted'`;

/** Ids are drawn per request, so results come back in the batch's order, not the insert's. */
export const NUMBERED = `numbered as (
    select outcomes.*,
           case when outcome in ('accepted', 'rejected', 'quota_exceeded', 'budget_exceeded',
                                 'key_reused', 'filtered')
             then nextval('events_id_seq'::regclass) end as id
    from outcomes
  )`;

/**
 * Each accepted request with a key claims it by storing its event: the unique index lets one of
 * any number of concurrent claims in. One that lost the race to another transaction fails the
 * statement (see EventBatchStore); 'on conflict' would cost every keyed event more.
 */
export const STORED = `stored as (
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
  )`;

/** Each accepted event uses a chat; a month that has begun since the last one counts from 0. */
export const SPENT = `spent as (
    update workspaces set
      chats_used = (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end)
                   + used.chats,
      quota_period_start = ${CURRENT_MONTH_START}
    from (select workspace_id, count(*)::integer as chats
          from numbered where outcome = 'accepted' group by workspace_id) as used
    where workspaces.id = used.workspace_id
  )`;

import { P } from '../store-event-batch-parameters.js';

// The batch as the statement reads it, and the verdicts the pipeline brought with it.

/**
 * The deadline is named before any row is read: a COMMIT reaching the database after it fails
 * (migrations/0006), and the wait for a quota row ends with it (lock_timeout).
 */
export const LIMITS = `limits as materialized (
    select set_config('hookprompt.commit_deadline', ${P.commitDeadline}, true),
           set_config('lock_timeout', ${P.lockTimeout}, true)
  )`;

/** The payloads turned into bytes once; each request's payload is a slice of them. */
export const PAYLOADS = `payloads as materialized (select convert_to(${P.payloads}::text, 'UTF8') as bytes)`;

/** One row per request, its position in the batch kept. */
export const REQUESTS = `requests as (
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
  )`;

/** The pipeline refused the request: it is recorded, and nothing else is decided for it. */
export const REJECTED = `when refusal is not null then 'rejected'`;

/** The payload did not meet the channel's accept_when: stored, using none of the quota. */
export const FILTERED = `when filtered_by is not null then 'filtered'`;

import type { Queryable } from '../db/database.js';
import { textArrayLiteral } from '../db/sql.js';

/** A reply the cache can serve: the event that was replied, and its reply as the model wrote it. */
export interface CachedReply {
  id: string;
  /** The reply as the model wrote it (placeholders not put back). */
  reply: string;
  provider: string | null;
  model: string | null;
}

/** The statement of findCachedReply (bench/reply-cache-bench.ts explains it). */
export const FIND_CACHED_REPLY = `select id, coalesce(reply_unrestored, reply) as reply, provider, model from events
  where channel_id = $1 and request_hash = decode($2, 'hex') and request_hash is not null
    and completed_at >= now() - $3::integer * interval '1 second'
  order by completed_at desc
  limit 1`;

/**
 * The newest event of the channel replied within the last `windowS` seconds (counted from its
 * `completed_at`) to a request with this hash; undefined on a miss. Only replies left in the
 * cache have a hash (replied without a tool call: see finishEvents), and events_reply_cache_idx
 * holds exactly those, so a miss reads one index page.
 */
export async function findCachedReply(
  db: Queryable,
  channelId: string,
  hash: string,
  windowS: number,
): Promise<CachedReply | undefined> {
  const { rows } = await db.query<CachedReply>(FIND_CACHED_REPLY, [channelId, hash, windowS]);
  return rows[0];
}

/** A claimed event replied from the cache, as it is stored. */
export interface Served {
  eventId: string;
  /** The event served from. */
  cachedFrom: string;
  /** The cached reply restored with this event's values. */
  reply: string;
  /** This event's prompt as it would have been sent. */
  prompt: string;
  missing: readonly string[];
  /** The cached event's. */
  provider: string | null;
  model: string | null;
  inputTruncated: boolean;
  redactions: Record<string, number> | null;
  redactionValues: Record<string, string> | null;
}

/**
 * Ends events replied from the cache, several in one statement (gathered like finishEvents): no
 * call made, so no attempt, usage, calls or cost. Matched on `locked_by` like every queue write,
 * so an event another worker took over is left alone; resolves to the ids this worker ended.
 * The event gets no hash of its own: a window runs from the reply a model gave, and is not
 * carried on by the replies served from it.
 */
export async function serveFromCache(
  db: Queryable,
  workerId: string,
  served: readonly Served[],
  deadline?: number,
): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `update events set
       status = 'replied', reply = s.reply, prompt = s.prompt, error = null,
       missing = s.missing::text[], provider = s.provider, model = s.model,
       input_truncated = s.input_truncated, redactions = s.redactions::jsonb,
       redaction_values = s.redaction_values::jsonb, cached_from = s.cached_from,
       attempts = 0, usage = null, latency_ms = null, cost_usd = 0, calls = '[]',
       tool_calls = '[]', rejected_reply = null, request_hash = null, reply_unrestored = null,
       locked_by = null, locked_until = null, completed_at = now()
     from unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[],
                 $8::text[], $9::boolean[], $10::text[], $11::text[])
       as s(id, cached_from, reply, prompt, missing, provider, model, input_truncated, redactions,
            redaction_values)
     where events.id = s.id and events.locked_by = $1 and events.status = 'processing'
     returning events.id`,
    [
      workerId,
      served.map((one) => one.eventId),
      served.map((one) => one.cachedFrom),
      served.map((one) => one.reply),
      served.map((one) => one.prompt),
      served.map((one) => textArrayLiteral(one.missing)),
      served.map((one) => one.provider),
      served.map((one) => one.model),
      served.map((one) => one.inputTruncated),
      served.map((one) => (one.redactions ? JSON.stringify(one.redactions) : null)),
      served.map((one) => (one.redactionValues ? JSON.stringify(one.redactionValues) : null)),
    ],
    // Planned for each call, not prepared under a name: see claimEvents.
    { deadline },
  );
  return new Set(rows.map((row) => row.id));
}

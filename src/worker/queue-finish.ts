import type { Queryable } from '../db/database.js';
import type { ReplyOutcomeStatus } from '../events/event-states.js';
import { textArrayLiteral } from '../db/sql.js';
import { CALLS_COST, KEEP_CALLS, callParams, type AiCallRecord } from './ai-call.js';

export type FinalOutcome = (
  | {
      status: 'replied';
      reply: string;
      /** Leaves the reply in the channel's reply cache (src/reply-cache/). */
      cache?: CacheEntry;
    }
  | { status: 'skipped'; prompt: string; missing: readonly string[] }
  | {
      status: 'failed';
      error: string;
      prompt?: string;
      /** The attempt's answer refused as `reply_invalid`; absent or null when it failed otherwise. */
      rejectedReply?: string | null;
    }
) & { status: ReplyOutcomeStatus };

/** A reply left in the cache: its request's hash, and the reply as the model wrote it when it differs. */
export interface CacheEntry {
  requestHash: string;
  replyUnrestored: string | null;
}

/** How one claimed event ends; `call` records the attempt's calls and their cost (none when it made none). */
export interface Finish {
  eventId: string;
  outcome: FinalOutcome;
  call?: AiCallRecord;
}

/**
 * Ends events for good and clears their leases, several in one statement (the worker gathers
 * the events that end while the previous statement runs: one commit for all of them). Matching
 * on `locked_by` as well as the id is what keeps a worker whose lease ran out (and whose event
 * another worker claimed) from writing a second result: that event is left as it is, and its id
 * is missing from the answer. Resolves to the ids this worker ended.
 * A prompt given here replaces the stored one; without one the prompt stored by
 * `startAttempts` stays. A failed event keeps its attempt's refused answer (`rejected_reply`),
 * or, when it ends without a call (no attempts left), the one its last retry kept; any other
 * outcome clears it, so a refused answer never stands beside a reply.
 * A reply given a cache entry keeps its request's hash unless a round of its attempt called a
 * tool (`tool_calls`, emptied when an attempt starts): such a reply is never served again.
 */
export async function finishEvents(
  db: Queryable,
  workerId: string,
  finishes: readonly Finish[],
  deadline?: number,
): Promise<Set<string>> {
  const rows = finishes.map(finishRow);
  const { rows: ended } = await db.query<{ id: string }>(
    `update events set
       status = finished.status,
       prompt = coalesce(finished.prompt, events.prompt),
       reply = finished.reply,
       error = finished.error,
       missing = coalesce(finished.missing::text[], events.missing),
       usage = coalesce(finished.usage::jsonb, events.usage),
       latency_ms = coalesce(finished.latency_ms, events.latency_ms),
       cost_usd = ${CALLS_COST('finished.calls::jsonb', 'finished.cost_usd')},
       provider = coalesce(finished.provider, events.provider),
       model = case when finished.provider is null then events.model else finished.model end,
       calls = ${KEEP_CALLS('finished.calls::jsonb')},
       rejected_reply = case when finished.status = 'failed' then coalesce(finished.rejected_reply,
         case when finished.calls is null then events.rejected_reply end) end,
       request_hash = case when events.tool_calls = '[]'::jsonb
         then decode(finished.request_hash, 'hex') end,
       reply_unrestored = case when events.tool_calls = '[]'::jsonb
         then finished.reply_unrestored end,
       conversation = null,
       locked_by = null,
       locked_until = null,
       completed_at = now()
     from unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                 $8::text[], $9::integer[], $10::numeric[], $11::text[], $12::text[], $13::text[],
                 $14::text[], $15::text[], $16::text[])
       as finished(id, status, prompt, reply, error, missing, usage, latency_ms, cost_usd, provider,
                   model, calls, rejected_reply, request_hash, reply_unrestored)
     where events.id = finished.id and events.locked_by = $1 and events.status = 'processing'
     returning events.id`,
    [workerId, ...Array.from({ length: 15 }, (_, column) => rows.map((row) => row[column]))],
    // Planned for each call, not prepared under a name: see claimEvents.
    { deadline },
  );
  return new Set(ended.map((row) => row.id));
}

function finishRow({ eventId, outcome, call }: Finish) {
  return [
    eventId,
    outcome.status,
    outcome.status === 'replied' ? null : (outcome.prompt ?? null),
    outcome.status === 'replied' ? outcome.reply : null,
    outcome.status === 'failed' ? outcome.error : null,
    outcome.status === 'skipped' ? textArrayLiteral(outcome.missing) : null,
    ...callParams(call),
    outcome.status === 'failed' ? (outcome.rejectedReply ?? null) : null,
    (outcome.status === 'replied' && outcome.cache?.requestHash) || null,
    (outcome.status === 'replied' && outcome.cache?.replyUnrestored) || null,
  ];
}

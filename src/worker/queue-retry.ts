import type { Queryable } from '../db/database.js';
import { CALLS_COST, KEEP_CALLS, callParams, type AiCallRecord } from './ai-call.js';

/**
 * Puts an event whose AI call failed for a passing reason back in the queue, due after an
 * exponential backoff: `baseMs` × 2^(attempts − 1), at most one hour, of which a random half
 * is dropped ("equal jitter") so events that failed together are not all retried together.
 * Computed in SQL so the delay is measured on the database clock, the one `claimEvents` reads.
 * A server that said how long to wait (`Retry-After`, as `minDelayMs`) is waited at least that
 * long. The error and the attempt's calls are kept so Brain Logs shows why the event is waiting,
 * and the refused answer of a `reply_invalid` (null after any other failure, so a stale one never
 * stands beside another error). A conversation taken up after an approval is dropped: the retry
 * starts from the first round (the decisions made are kept). Only the lock owner may do this (see `finishEvents`). Resolves to the milliseconds until the event is due again, or
 * undefined when the worker no longer held the event.
 */
export async function retryEvent(
  db: Queryable,
  eventId: string,
  workerId: string,
  failure: { error: string; rejectedReply: string | null },
  baseMs: number,
  minDelayMs = 0,
  call?: AiCallRecord,
): Promise<number | undefined> {
  const { rows } = await db.query<{ due_in_ms: number }>(
    `update events set
       status = 'pending',
       error = $3,
       run_at = now() + greatest(
         least($4::float8 * power(2, attempts - 1), 3600000) * (0.5 + random() / 2),
         $5::float8
       ) * interval '1 millisecond',
       usage = coalesce($6::jsonb, usage),
       latency_ms = coalesce($7, latency_ms),
       cost_usd = ${CALLS_COST('$11::jsonb', '$8::numeric')},
       provider = coalesce($9, provider),
       model = case when $9::text is null then model else $10 end,
       calls = ${KEEP_CALLS('$11::jsonb')},
       rejected_reply = $12,
       conversation = null,
       locked_by = null,
       locked_until = null
     where id = $1 and locked_by = $2 and status = 'processing'
     returning (extract(epoch from run_at - now()) * 1000)::float8 as due_in_ms`,
    [
      eventId,
      workerId,
      failure.error,
      baseMs,
      minDelayMs,
      ...callParams(call),
      failure.rejectedReply,
    ],
  );
  return rows[0]?.due_in_ms;
}

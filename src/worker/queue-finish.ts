import type { Queryable } from '../db/database.js';
import type { ReplyOutcomeStatus } from '../events/event-states.js';
import { callParams, type AiCallRecord } from './ai-call.js';

export type FinalOutcome = (
  | { status: 'replied'; reply: string }
  | { status: 'skipped'; prompt: string; missing: readonly string[] }
  | { status: 'failed'; error: string; prompt?: string }
) & { status: ReplyOutcomeStatus };

/**
 * Ends an event for good and clears its lease. Matching on `locked_by` as well as the id is
 * what keeps a worker whose lease ran out (and whose event another worker claimed) from
 * writing a second result: it then updates nothing and gets false back.
 * A prompt given here replaces the stored one; without one the prompt stored by
 * `startAttempt` stays. `call` records the usage and latency of an answered call.
 */
export async function finishEvent(
  db: Queryable,
  eventId: string,
  workerId: string,
  outcome: FinalOutcome,
  call?: AiCallRecord,
): Promise<boolean> {
  const prompt = outcome.status === 'replied' ? null : (outcome.prompt ?? null);
  const { rowCount } = await db.query(
    `update events set
       status = $3,
       prompt = coalesce($4, prompt),
       reply = $5,
       error = $6,
       missing = coalesce($7::text[], missing),
       usage = coalesce($8::jsonb, usage),
       latency_ms = coalesce($9, latency_ms),
       locked_by = null,
       locked_until = null,
       completed_at = now()
     where id = $1 and locked_by = $2 and status = 'processing'`,
    [
      eventId,
      workerId,
      outcome.status,
      prompt,
      outcome.status === 'replied' ? outcome.reply : null,
      outcome.status === 'failed' ? outcome.error : null,
      outcome.status === 'skipped' ? outcome.missing : null,
      ...callParams(call),
    ],
    { name: 'finish-event' },
  );
  return rowCount > 0;
}

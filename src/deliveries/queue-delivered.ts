import type { Queryable } from '../db/database.js';

/** What Brain Logs shows of an attempt besides its status (see migration 0031): no secret. */
export interface AttemptShown {
  /** Where the request went: a URL without userinfo, query or fragment, or a platform's words. */
  target: string | null;
  /** The start of the answer's body (see answerExcerpt); null when no answer came. */
  answer: string | null;
}

/** A message its receiver answered with a 2xx. */
export interface Delivered extends AttemptShown {
  deliveryId: string;
  status: number;
  durationMs: number;
}

/**
 * Ends deliveries for good after a 2xx, and records their attempts, several in one statement
 * (the worker gathers the sends that end while the previous statement runs: one commit for all
 * of them). Matching `locked_by` keeps a worker whose lease ran out from writing over the one
 * that took a message on: that message is then neither updated nor recorded. Resolves to the ids
 * this worker ended.
 */
export async function markDelivered(
  db: Queryable,
  workerId: string,
  delivered: readonly Delivered[],
  deadline?: number,
): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `with sent as (
       select * from unnest($2::bigint[], $3::integer[], $4::integer[], $5::text[], $6::text[])
         as sent(id, status, duration_ms, target, answer)
     ),
     done as (
       update deliveries set
         state = 'delivered',
         attempts = attempts + 1,
         last_status = sent.status,
         last_error = null,
         delivered_at = now(),
         locked_by = null,
         locked_until = null
       from sent
       where deliveries.id = sent.id and locked_by = $1 and state = 'sending'
       returning deliveries.id, sent.status, sent.duration_ms, sent.target, sent.answer
     ),
     recorded as (
       insert into delivery_attempts (delivery_id, status, duration_ms, target, answer)
       select id, status, duration_ms, target, answer from done
     )
     select id from done`,
    [
      workerId,
      delivered.map((d) => d.deliveryId),
      delivered.map((d) => d.status),
      delivered.map((d) => Math.round(d.durationMs)),
      delivered.map((d) => d.target),
      delivered.map((d) => d.answer),
    ],
    // Planned for each call, not prepared under a name: see claimEvents (worker/queue-claim.ts).
    { deadline },
  );
  return new Set(rows.map((row) => row.id));
}

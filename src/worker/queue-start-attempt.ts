import type { Queryable } from '../db/database.js';
import { textArrayLiteral } from '../db/sql.js';

/** An AI call about to be made for a claimed event. */
export interface Start {
  eventId: string;
  prompt: string;
  /** The placeholders the payload lacked. */
  missing: readonly string[];
  /** The model the call names, or null (the echo without AI_MODEL). */
  model: string | null;
}

/**
 * Records that AI calls are about to be made, several in one statement (the events of one claim
 * start together): stores each prompt, the placeholders it missed and the model it names,
 * counts the attempt and renews the lease so it covers the call from its start. Resolves to the
 * new attempt count of each event this worker still holds; an event missing from the answer was
 * lost (its lease ran out and another worker claimed it): then no call may be made.
 *
 * Counting before the call, not after, means a call cut short by a crash still counts, so an
 * event that keeps killing its worker mid-call cannot be tried forever.
 */
export async function startAttempts(
  db: Queryable,
  workerId: string,
  leaseMs: number,
  starts: readonly Start[],
  deadline?: number,
): Promise<Map<string, number>> {
  const { rows } = await db.query<{ id: string; attempts: number }>(
    `update events set
       attempts = events.attempts + 1,
       prompt = started.prompt,
       missing = started.missing::text[],
       model = started.model,
       locked_until = now() + $2::integer * interval '1 millisecond'
     from unnest($3::bigint[], $4::text[], $5::text[], $6::text[])
       as started(id, prompt, missing, model)
     where events.id = started.id and events.locked_by = $1 and events.status = 'processing'
     returning events.id, events.attempts`,
    [
      workerId,
      leaseMs,
      starts.map((start) => start.eventId),
      starts.map((start) => start.prompt),
      starts.map((start) => textArrayLiteral(start.missing)),
      starts.map((start) => start.model),
    ],
    { name: 'start-attempts', deadline },
  );
  return new Map(rows.map((row) => [row.id, row.attempts]));
}

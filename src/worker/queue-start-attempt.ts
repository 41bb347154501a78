import type { Queryable } from '../db/database.js';

/**
 * Records that an AI call is about to be made: stores the prompt, the placeholders it missed and
 * the model it names, counts the attempt and renews
 * the lease so it covers this call from its start. Resolves to the new attempt count, or
 * undefined when the worker no longer holds the event (its lease ran out and another worker
 * claimed it): then no call may be made.
 *
 * Counting before the call, not after, means a call cut short by a crash still counts, so an
 * event that keeps killing its worker mid-call cannot be tried forever.
 */
export async function startAttempt(
  db: Queryable,
  eventId: string,
  workerId: string,
  prompt: string,
  leaseMs: number,
  missing: readonly string[],
  model: string | null,
): Promise<number | undefined> {
  const { rows } = await db.query<{ attempts: number }>(
    `update events set
       attempts = attempts + 1,
       prompt = $3,
       missing = $5::text[],
       model = $6,
       locked_until = now() + $4::integer * interval '1 millisecond'
     where id = $1 and locked_by = $2 and status = 'processing'
     returning attempts`,
    [eventId, workerId, prompt, leaseMs, missing, model],
    { name: 'start-attempt' },
  );
  return rows[0]?.attempts;
}

import type { Queryable } from '../db/database.js';
import type { AttemptShown } from './queue-delivered.js';
import type { DeliveryState } from './delivery-states.js';

export interface FailedAttempt extends AttemptShown {
  /** The HTTP status, or null when no answer came. */
  status: number | null;
  error: string;
  durationMs: number;
  /** At least this long before the next attempt (the receiver's Retry-After), in ms. */
  notBeforeMs: number;
  /** No further attempt can help (an address that may not be reached): fail now. */
  final: boolean;
  /** Parts of a long text taken so far (a destination's message); undefined leaves them. */
  parts?: number;
}

/**
 * Records a failed attempt and either schedules the next one or ends the delivery `failed`.
 * The schedule is DELIVERY_RETRY_SCHEDULE in ms: its n-th entry is the wait after the n-th
 * attempt of the current round (`round_start` counts attempts of earlier rounds, before a
 * "deliver again"), so n entries allow n + 1 attempts. Computed in SQL, on the database
 * clock the claim reads. Only the lease owner writes; resolves to the new state, or
 * undefined when the worker no longer held the delivery.
 */
export async function retryDelivery(
  db: Queryable,
  deliveryId: string,
  workerId: string,
  attempt: FailedAttempt,
  scheduleMs: readonly number[],
): Promise<DeliveryState | undefined> {
  const { rows } = await db.query<{ state: DeliveryState }>(
    `with done as (
       update deliveries set
         attempts = attempts + 1,
         state = case
           when $6::boolean or attempts + 1 - round_start > cardinality($7::bigint[]) then 'failed'
           else 'pending' end,
         run_at = now() + greatest(
           coalesce(($7::bigint[])[attempts + 1 - round_start], 0), $5::bigint
         ) * interval '1 millisecond',
         last_status = $3,
         last_error = $4,
         parts = coalesce($9::integer, parts),
         locked_by = null,
         locked_until = null
       where id = $1 and locked_by = $2 and state = 'sending'
       returning id, state
     ),
     recorded as (
       insert into delivery_attempts (delivery_id, status, error, duration_ms, target, answer)
       select id, $3, $4, $8, $10, $11 from done
     )
     select state from done`,
    [
      deliveryId,
      workerId,
      attempt.status,
      attempt.error,
      Math.round(attempt.notBeforeMs),
      attempt.final,
      scheduleMs,
      Math.round(attempt.durationMs),
      attempt.parts ?? null,
      attempt.target,
      attempt.answer,
    ],
  );
  return rows[0]?.state;
}

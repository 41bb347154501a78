import type { Queryable } from '../db/database.js';
import type { AttemptShown } from './queue-delivered.js';

/** An attempt whose target answered it is gone for good (the reply URL's 410). */
export interface GoneAttempt extends AttemptShown {
  deliveryId: string;
  /** Why delivery is off, shown to admins; also the attempt's error. */
  reason: string;
  durationMs: number;
}

/**
 * The target is gone: this message waits with the channel's others, due as soon as an admin
 * turns delivery on again, and the attempt is recorded. Only the lease owner does this;
 * resolves to the message's channel, which the caller turns off in the same transaction (so
 * the channel is never left on with the message given back, nor the other way round), or
 * undefined when the worker no longer held it.
 */
export async function deliveryGone(
  db: Queryable,
  workerId: string,
  gone: GoneAttempt,
): Promise<string | undefined> {
  const { rows } = await db.query<{ channel_id: string }>(
    `with done as (
       update deliveries set
         state = 'pending',
         attempts = attempts + 1,
         run_at = now(),
         last_status = 410,
         last_error = $3,
         locked_by = null,
         locked_until = null
       where id = $1 and locked_by = $2 and state = 'sending'
       returning id, channel_id
     ),
     recorded as (
       insert into delivery_attempts (delivery_id, status, error, duration_ms, target, answer)
       select id, 410, $3, $4, $5, $6 from done
     )
     select channel_id::text from done`,
    [gone.deliveryId, workerId, gone.reason, Math.round(gone.durationMs), gone.target, gone.answer],
  );
  return rows[0]?.channel_id;
}

import type { Queryable } from '../db/database.js';
import type { AttemptShown } from './queue-delivered.js';

/**
 * The receiver answered 410 Gone: delivery is turned off for the whole channel (with the
 * reason shown to admins) and this message waits with the channel's others, due as soon as an
 * admin turns delivery on again. One statement, so the channel is never left on with the
 * message given back, nor the other way round. Only the lease owner does this.
 */
export async function deliveryGone(
  db: Queryable,
  deliveryId: string,
  workerId: string,
  reason: string,
  attempt: AttemptShown & { durationMs: number },
): Promise<boolean> {
  const { rowCount } = await db.query(
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
     off as (
       update channels set reply_enabled = false, reply_disabled_reason = $3, updated_at = now()
       from done where channels.id = done.channel_id
     )
     insert into delivery_attempts (delivery_id, status, error, duration_ms, target, answer)
     select id, 410, $3, $4, $5, $6 from done`,
    [deliveryId, workerId, reason, Math.round(attempt.durationMs), attempt.target, attempt.answer],
  );
  return rowCount > 0;
}

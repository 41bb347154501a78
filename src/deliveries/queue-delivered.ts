import type { Queryable } from '../db/database.js';

/**
 * Ends a delivery for good after a 2xx, and records the attempt. Matching `locked_by` keeps a
 * worker whose lease ran out from writing over the one that took the message on: it then
 * updates and records nothing, and gets false back.
 */
export async function markDelivered(
  db: Queryable,
  deliveryId: string,
  workerId: string,
  status: number,
  durationMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `with done as (
       update deliveries set
         state = 'delivered',
         attempts = attempts + 1,
         last_status = $3,
         last_error = null,
         delivered_at = now(),
         locked_by = null,
         locked_until = null
       where id = $1 and locked_by = $2 and state = 'sending'
       returning id
     )
     insert into delivery_attempts (delivery_id, status, duration_ms)
     select id, $3, $4 from done`,
    [deliveryId, workerId, status, Math.round(durationMs)],
  );
  return rowCount > 0;
}

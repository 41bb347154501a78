import type { Queryable } from '../db/database.js';

/**
 * Gives a delivery back unsent, due at once (the worker is shutting down and cut its request
 * short), so another process need not wait for the lease. Nothing is counted: whether the
 * receiver saw the message is unknown, and it may see it again with the same webhook-id.
 */
export async function releaseDelivery(
  db: Queryable,
  deliveryId: string,
  workerId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update deliveries set state = 'pending', run_at = now(), locked_by = null, locked_until = null
     where id = $1 and locked_by = $2 and state = 'sending'`,
    [deliveryId, workerId],
  );
  return rowCount > 0;
}

import type { Queryable } from '../db/database.js';

/**
 * "Deliver again": a failed delivery of an event of the workspace goes back to pending, due
 * now, with a fresh round of the retry schedule. The message (its id and body) stays the same.
 * Resolves to false when the event has no failed delivery.
 */
export async function redeliver(
  db: Queryable,
  workspaceId: string,
  eventId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update deliveries set state = 'pending', run_at = now(), round_start = attempts
     from channels
     where deliveries.id = (select max(id) from deliveries where event_id = $2)
       and deliveries.state = 'failed'
       and channels.id = deliveries.channel_id and channels.workspace_id = $1`,
    [workspaceId, eventId],
  );
  return rowCount > 0;
}

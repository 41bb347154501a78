import type { Queryable } from '../db/database.js';

/**
 * "Deliver again": the failed or held delivery of an event of the workspace goes back to pending,
 * due now, with a fresh round of the retry schedule. The message (its id and body) stays the
 * same. A held one (pending while its channel's delivery is off) goes out once delivery is on
 * again, with the whole schedule before it. Resolves to false when the event has neither.
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
       and channels.id = deliveries.channel_id and channels.workspace_id = $1
       and (deliveries.state = 'failed'
         or (deliveries.state = 'pending' and not (channels.reply_enabled
           and channels.reply_url is not null and channels.deleted_at is null)))`,
    [workspaceId, eventId],
  );
  return rowCount > 0;
}

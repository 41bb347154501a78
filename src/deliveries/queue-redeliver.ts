import type { Queryable } from '../db/database.js';

/**
 * "Deliver again": the failed or held delivery of an event of the workspace goes back to pending,
 * due now, with a fresh round of the retry schedule. The message (its id and body) stays the
 * same. A held one (pending while its channel's delivery is off) goes out once delivery is on
 * again, with the whole schedule before it; the event's messages to destinations likewise.
 * Resolves to false when the event has none of these.
 */
export async function redeliver(
  db: Queryable,
  workspaceId: string,
  eventId: string,
  destinationId?: string,
): Promise<boolean> {
  if (destinationId !== undefined) {
    return (await redeliverToDestinations(db, workspaceId, eventId, destinationId)) > 0;
  }
  const { rowCount } = await db.query(
    `update deliveries set state = 'pending', run_at = now(), round_start = attempts
     from channels
     where deliveries.id = (select max(id) from deliveries
                            where event_id = $2 and destination_id is null)
       and channels.id = deliveries.channel_id and channels.workspace_id = $1
       and (deliveries.state = 'failed'
         or (deliveries.state = 'pending' and not (channels.deleted_at is null and exists (
           select 1 from destinations reply
           where reply.channel_id = channels.id and reply.role = 'reply_url' and reply.enabled
             and reply.url is not null))))`,
    [workspaceId, eventId],
  );
  const destinations = await redeliverToDestinations(db, workspaceId, eventId);
  return rowCount + destinations > 0;
}

/**
 * The same for the event's messages to destinations (to one of them, when named): the latest to
 * each destination that failed, or waits while the destination is off. Parts a platform took
 * already are not sent again.
 */
async function redeliverToDestinations(
  db: Queryable,
  workspaceId: string,
  eventId: string,
  destinationId?: string,
): Promise<number> {
  const { rowCount } = await db.query(
    `update deliveries set state = 'pending', run_at = now(), round_start = attempts
     from destinations, channels
     where deliveries.id in (
         select max(id) from deliveries where event_id = $2 and destination_id is not null
           and ($3::bigint is null or destination_id = $3::bigint)
         group by destination_id)
       and destinations.id = deliveries.destination_id
       and channels.id = deliveries.channel_id and channels.workspace_id = $1
       and (deliveries.state = 'failed'
         or (deliveries.state = 'pending' and not destinations.enabled))`,
    [workspaceId, eventId, destinationId ?? null],
  );
  return rowCount;
}

import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { DeliveryType } from './delivery-states.js';

/** A delivery reserved for one worker, with everything its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  workspace_id: string;
  webhook_id: string;
  type: DeliveryType;
  /** The body fixed before the first attempt; null until then. */
  message: string | null;
  attempts: number;
  /** The reply URL; null for a message to a destination. */
  url: string | null;
  /** The channel's signing secret (reply delivery and `webhook` destinations), opened. */
  secret: string | null;
  /** The secret before the last rotation, while its overlap lasts. */
  previous_secret: string | null;
  /** The event's stored traceparent, which the attempt's span continues (src/tracing/). */
  event_traceparent: string | null;
  /** The destination of the message; null for reply delivery. */
  destination_id: string | null;
  /** Parts of a long text the destination took in earlier attempts. */
  parts: number;
  channel_name: string;
}

/**
 * Reserves up to `limit` due deliveries for `workerId` until `leaseMs` from now, in one
 * statement that commits before anything is sent (the same discipline as the events queue,
 * src/worker/queue-claim.ts):
 *
 * - `for update of deliveries skip locked`: concurrent claims pass over each other's rows, so
 *   no two workers send one message at once; the where clause is re-checked on the newest row
 *   version after locking.
 * - `due_at` (generated, migrations/0008) is a pending delivery's `run_at` or a sending one's
 *   `locked_until`: one condition finds due messages and messages whose worker died mid-send,
 *   which go out again with the same webhook-id.
 * - Only channels whose reply URL (their `destinations` row of role `reply_url`, migrations/0045)
 *   is on: messages of a channel that answered 410, was turned off or lost its URL stay pending
 *   ("held") and go out once it is on again; the same for a destination turned off.
 * - A message to a destination waits while an earlier message of its thread to the same
 *   destination is unsent (pending, retrying or being sent): a thread's messages arrive in
 *   event order (the events of a thread finish one after the other, so ids follow it).
 * - The URL and secrets are read here, so an attempt uses the channel's settings of now; the
 *   secrets (and a reply URL sealed for its credentials or query) are opened here too, once per
 *   claim.
 * - Prepared under a name, unlike the events queue's statements: its generic plan walks the queue
 *   index from its head, whatever the backlog. The channel and the destination are checked in
 *   subqueries, not joined: with a join, the generic plan of the reply-or-destination condition
 *   hashed the channels and sorted the whole queue. Planned for each call on a table PostgreSQL has no
 *   statistics for yet, it read the whole backlog to claim a few (bench/HISTORY.md, "The worker's
 *   cached plans"; test/worker/queue-backlog.test.ts). Messages held for a channel whose delivery
 *   is off sit in the same index, and a claim reads past them either way.
 */
export async function claimDeliveries(
  db: Queryable,
  secrets: SecretBox,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>(
    `with next as (
       select deliveries.id from deliveries
       where deliveries.state in ('pending', 'sending') and deliveries.due_at <= now()
         and case when deliveries.destination_id is null
           then exists (
             select 1 from destinations reply join channels on channels.id = reply.channel_id
             where reply.channel_id = deliveries.channel_id and reply.role = 'reply_url'
               and reply.enabled and reply.url is not null
               and channels.deleted_at is null and channels.reply_secret is not null)
           else exists (
               select 1 from destinations join channels on channels.id = destinations.channel_id
               where destinations.id = deliveries.destination_id and destinations.enabled
                 and channels.deleted_at is null
                 and (destinations.kind <> 'webhook' or channels.reply_secret is not null))
             and (deliveries.thread_key is null or not exists (
               select 1 from deliveries earlier
               where earlier.destination_id = deliveries.destination_id
                 and earlier.thread_key = deliveries.thread_key
                 and earlier.id < deliveries.id and earlier.state in ('pending', 'sending')))
           end
       order by deliveries.due_at, deliveries.id
       limit $2
       for update of deliveries skip locked
     )
     update deliveries set
       state = 'sending',
       locked_by = $1,
       locked_until = now() + $3::integer * interval '1 millisecond'
     from next, channels
     where deliveries.id = next.id and channels.id = deliveries.channel_id
     returning deliveries.id, deliveries.event_id, channels.workspace_id, deliveries.webhook_id,
       deliveries.type, deliveries.message, deliveries.attempts,
       (select reply.url from destinations reply
        where deliveries.destination_id is null and reply.channel_id = deliveries.channel_id
          and reply.role = 'reply_url') as url,
       channels.reply_secret as secret,
       case when channels.reply_previous_until > now() then channels.reply_previous_secret end
         as previous_secret,
       (select traceparent from events where events.id = deliveries.event_id)
         as event_traceparent,
       deliveries.destination_id, deliveries.parts, channels.name as channel_name`,
    [workerId, limit, leaseMs],
    { name: 'claim-deliveries' },
  );
  return rows.map((row) => ({
    ...row,
    url: secrets.open(row.url),
    secret: secrets.open(row.secret),
    previous_secret: secrets.open(row.previous_secret),
  }));
}

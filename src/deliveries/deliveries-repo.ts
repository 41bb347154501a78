import type { Queryable } from '../db/database.js';
import type { DeliveryState } from './delivery-states.js';

/** The latest delivery of an event, with whether its channel's delivery is on right now. */
export interface DeliveryRow {
  id: string;
  event_id: string;
  webhook_id: string;
  state: DeliveryState;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
  channel_delivery_on: boolean;
}

const DELIVERY_COLUMNS = `deliveries.id, deliveries.event_id, deliveries.webhook_id,
  deliveries.state, deliveries.attempts, deliveries.last_status, deliveries.last_error,
  deliveries.delivered_at, deliveries.created_at,
  (channels.deleted_at is null and exists (
    select 1 from destinations reply
    where reply.channel_id = channels.id and reply.role = 'reply_url' and reply.enabled
      and reply.url is not null)) as channel_delivery_on`;

/** The newest delivery of each of these events (an event replayed has one per outcome). */
export async function latestDeliveries(
  db: Queryable,
  eventIds: readonly string[],
): Promise<DeliveryRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await db.query<DeliveryRow>(
    `select distinct on (deliveries.event_id) ${DELIVERY_COLUMNS}
     from deliveries join channels on channels.id = deliveries.channel_id
     where deliveries.event_id = any($1::bigint[]) and deliveries.destination_id is null
     order by deliveries.event_id, deliveries.id desc`,
    [eventIds],
  );
  return rows;
}

/** The newest delivery of a channel: "the last delivery result" of the channel editor. */
export async function lastChannelDelivery(
  db: Queryable,
  channelId: string,
): Promise<DeliveryRow | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `select ${DELIVERY_COLUMNS}
     from deliveries join channels on channels.id = deliveries.channel_id
     where deliveries.channel_id = $1 and deliveries.attempts > 0
       and deliveries.destination_id is null
     order by deliveries.id desc limit 1`,
    [channelId],
  );
  return rows[0];
}

/** The newest message of each event to each destination, with its destination's state. */
export interface DestinationDeliveryRow extends DeliveryRow {
  destination_id: string;
  kind: string;
}

export async function destinationDeliveries(
  db: Queryable,
  eventIds: readonly string[],
): Promise<DestinationDeliveryRow[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await db.query<DestinationDeliveryRow>(
    `select distinct on (deliveries.event_id, deliveries.destination_id)
       deliveries.id, deliveries.event_id, deliveries.webhook_id, deliveries.state,
       deliveries.attempts, deliveries.last_status, deliveries.last_error,
       deliveries.delivered_at, deliveries.created_at, deliveries.destination_id,
       destinations.kind, destinations.enabled as channel_delivery_on
     from deliveries join destinations on destinations.id = deliveries.destination_id
     where deliveries.event_id = any($1::bigint[])
     order by deliveries.event_id, deliveries.destination_id, deliveries.id desc`,
    [eventIds],
  );
  return rows;
}

/**
 * The latest messages (at most `limit` each) to each destination of a channel, newest first:
 * the channel editor shows the last ones and the share delivered.
 */
export async function recentDestinationDeliveries(
  db: Queryable,
  channelId: string,
  limit: number,
): Promise<DestinationDeliveryRow[]> {
  const { rows } = await db.query<DestinationDeliveryRow>(
    `select recent.id, recent.event_id, recent.webhook_id, recent.state, recent.attempts,
       recent.last_status, recent.last_error, recent.delivered_at, recent.created_at,
       recent.destination_id, destinations.kind, destinations.enabled as channel_delivery_on
     from (
       select deliveries.*,
         row_number() over (partition by destination_id order by id desc) as position
       from deliveries where channel_id = $1 and destination_id is not null
     ) as recent join destinations on destinations.id = recent.destination_id
     where recent.position <= $2
     order by recent.destination_id, recent.id desc`,
    [channelId, limit],
  );
  return rows;
}

export interface AttemptRow {
  delivery_id: string;
  attempted_at: Date;
  status: number | null;
  error: string | null;
  duration_ms: number;
  target: string | null;
  answer: string | null;
  /** Made for the event's newest delivery (a replayed event has one delivery per outcome). */
  current: boolean;
}

/** Every attempt made to deliver an event's reply (all its reply deliveries), oldest first. */
export async function attemptsOfEvent(db: Queryable, eventId: string): Promise<AttemptRow[]> {
  const { rows } = await db.query<AttemptRow>(
    `select delivery_attempts.delivery_id, attempted_at, status, error, duration_ms, target,
            answer, deliveries.id = (select max(id) from deliveries
                             where event_id = $1 and destination_id is null) as current
     from delivery_attempts join deliveries on deliveries.id = delivery_attempts.delivery_id
     where deliveries.event_id = $1 and deliveries.destination_id is null
     order by delivery_attempts.id`,
    [eventId],
  );
  return rows;
}

/**
 * Every attempt at the event's newest message to each destination, oldest first (a replayed
 * event's earlier messages are left out: `deliveries` on the event describes the newest).
 */
export async function destinationAttemptsOfEvent(
  db: Queryable,
  eventId: string,
): Promise<(AttemptRow & { destination_id: string })[]> {
  const { rows } = await db.query<AttemptRow & { destination_id: string }>(
    `select deliveries.destination_id, delivery_attempts.delivery_id, attempted_at, status,
            error, duration_ms, target, answer, true as current
     from delivery_attempts join deliveries on deliveries.id = delivery_attempts.delivery_id
     where deliveries.id in (select max(id) from deliveries
                             where event_id = $1 and destination_id is not null
                             group by destination_id)
     order by delivery_attempts.id`,
    [eventId],
  );
  return rows;
}

/** Failed deliveries of one channel to one target (its reply URL or a destination). */
export interface DeliveryFailureGroup {
  channel_id: string;
  /** The destination's id; null for the reply URL's messages. */
  destination_id: string | null;
  /** The destination's kind; the reply URL's messages count as `webhook`. */
  kind: string;
  /** How many events: each counts its newest message to the target, as Brain Logs shows it. */
  count: number;
  last_at: Date;
}

/**
 * Events of a workspace (or one channel) received in [from, to) whose newest message to a target
 * ended `failed`, grouped by channel and target, most frequent first: Brain Logs' "delivery to
 * Slack #alerts failed ×3", whose link (delivery=failed, to that target, the same window) lists
 * exactly those events.
 */
export async function deliveryFailureGroups(
  db: Queryable,
  workspaceId: string,
  channelId: string | undefined,
  from: Date,
  to: Date,
  limit: number,
): Promise<DeliveryFailureGroup[]> {
  const { rows } = await db.query<DeliveryFailureGroup>(
    `select deliveries.channel_id::text, deliveries.destination_id::text,
            coalesce(destinations.kind, 'webhook') as kind, count(*)::integer as count,
            max(coalesce((select max(attempted_at) from delivery_attempts
                          where delivery_attempts.delivery_id = deliveries.id),
                         deliveries.created_at)) as last_at
     from deliveries
       join events on events.id = deliveries.event_id
       left join destinations on destinations.id = deliveries.destination_id
     where events.workspace_id = $1 and ($2::bigint is null or events.channel_id = $2)
       and events.received_at >= $3 and events.received_at < $4
       and deliveries.state = 'failed'
       and not exists (select 1 from deliveries newer
                       where newer.event_id = deliveries.event_id and newer.id > deliveries.id
                         and newer.destination_id is not distinct from deliveries.destination_id)
     group by deliveries.channel_id, deliveries.destination_id, destinations.kind
     order by count desc, last_at desc
     limit $5`,
    [workspaceId, channelId ?? null, from, to, limit],
  );
  return rows;
}

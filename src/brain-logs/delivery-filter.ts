/**
 * Brain Logs' filter on delivery: the events with at least one message (to the reply URL or a
 * destination) in a state, or with none at all. A message counts as it is shown on the event's
 * row and page: the newest to each target (a replayed event has one message per outcome), and
 * `held` / `pending` for a waiting one as src/deliveries/delivery-states.ts's shownStatus says.
 */
export const DELIVERY_FILTERS = ['failed', 'held', 'pending', 'delivered', 'none'] as const;
export type DeliveryFilter = (typeof DELIVERY_FILTERS)[number];

/**
 * The reply URL's messages (those without a destination_id: the channel has one reply URL), as
 * a target of the filter; a destination is named by its id.
 */
export const REPLY_URL_TARGET = 'reply_url';

export interface DeliveryCondition {
  /** Undefined: any message at all (to `to`, when given). */
  state?: DeliveryFilter;
  /** `reply_url`, or a destination's id: only the messages to it. */
  to?: string;
}

export function isDeliveryFilter(value: string): value is DeliveryFilter {
  return (DELIVERY_FILTERS as readonly string[]).includes(value);
}

type Param = (value: unknown) => string;

/** Whether the message's target takes deliveries now: when not, a waiting message is held. */
const TARGET_ON = `case when deliveries.destination_id is null
    then exists (select 1 from channels join destinations reply
                   on reply.channel_id = channels.id and reply.role = 'reply_url'
                 where channels.id = deliveries.channel_id and channels.deleted_at is null
                   and reply.enabled and reply.url is not null)
    else exists (select 1 from destinations where destinations.id = deliveries.destination_id
                   and destinations.enabled) end`;

const STATES: Record<Exclude<DeliveryFilter, 'none'>, string> = {
  failed: `deliveries.state = 'failed'`,
  delivered: `deliveries.state = 'delivered'`,
  pending: `deliveries.state in ('pending', 'sending') and ${TARGET_ON}`,
  held: `deliveries.state in ('pending', 'sending') and not ${TARGET_ON}`,
};

/**
 * The `where` term on `events` (unaliased) for a delivery condition: an EXISTS over the event's
 * messages, which deliveries_event_idx (event_id, id) answers per event.
 *
 * `perEvent` is for listings (newest first, a page at a time): `offset 0` keeps PostgreSQL from
 * turning the EXISTS into a join, which it plans as a hash of every failed message and a sort
 * of all their events (an all-time list of a workspace read its 20,000 events for one page);
 * checked per event, a page walks the listing index in its order and stops when full. Counts
 * and the chart read every event of their range anyway: for them the join, through
 * deliveries_failed_idx (migrations/0033) for `failed`, reads far less.
 */
export function deliveryCondition(
  { state, to }: DeliveryCondition,
  param: Param,
  perEvent = false,
): string {
  const where = ['deliveries.event_id = events.id'];
  if (to === REPLY_URL_TARGET) where.push('deliveries.destination_id is null');
  else if (to !== undefined) where.push(`deliveries.destination_id = ${param(to)}::bigint`);
  const fence = perEvent ? ' offset 0' : '';
  if (state === 'none')
    return `not exists (select 1 from deliveries where ${where.join(' and ')}${fence})`;
  if (state !== undefined) {
    where.push(STATES[state]);
    // Only the newest message to its target counts: an earlier outcome's is history.
    where.push(`not exists (select 1 from deliveries newer
        where newer.event_id = deliveries.event_id and newer.id > deliveries.id
          and newer.destination_id is not distinct from deliveries.destination_id)`);
  }
  return `exists (select 1 from deliveries where ${where.join(' and ')}${fence})`;
}

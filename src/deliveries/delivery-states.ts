/**
 * A reply delivery's life, in one place:
 *
 *   pending → sending → delivered
 *                ↓  ↘
 *             pending  failed (after the last attempt of the schedule, or a refusal no retry mends)
 *
 * `sending` is held by one delivery worker until its lease ends; a worker that dies leaves it
 * to be taken again (same webhook-id). A pending delivery of a channel whose delivery is off
 * (a 410, an admin, no URL) waits: the API shows it as `held`. A message to a destination whose
 * `when` does not hold, or whose message renders empty, ends `skipped` before any attempt.
 */
export const DELIVERY_STATES = ['pending', 'sending', 'delivered', 'failed', 'skipped'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** What the API and Brain Logs show: a stored state, or `held` for a pending one that waits. */
export const SHOWN_DELIVERY_STATUSES = [
  'pending',
  'delivered',
  'failed',
  'skipped',
  'held',
] as const;
export type ShownDeliveryStatus = (typeof SHOWN_DELIVERY_STATUSES)[number];

/** The message types, one per way an event can end. */
export const DELIVERY_TYPES = ['event.replied', 'event.skipped', 'event.failed'] as const;
export type DeliveryType = (typeof DELIVERY_TYPES)[number];

export function shownStatus(state: DeliveryState, channelDeliveryOn: boolean): ShownDeliveryStatus {
  if (state === 'delivered' || state === 'failed' || state === 'skipped') return state;
  return channelDeliveryOn ? 'pending' : 'held';
}

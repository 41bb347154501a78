import type { DestinationDelivery, EventDelivery } from '../../events/event-object.js';
import { KIND_NAMES } from '../../destinations/destination-label.js';
import type { DestinationKind } from '../../destinations/destination-schemas.js';

/** One target of an event as the panel names it: the reply URL or a destination. */
export interface TargetView {
  name: string;
  status: DestinationDelivery['status'];
}

/**
 * The Delivery cell of a Brain Logs row: every target of the event at a glance (the reply URL's
 * message and each destination's), coloured by the worst of them.
 */
export interface TargetsSummary {
  /** The badge's colour: `failed` when any failed, `skipped` when none was meant to go. */
  state: DestinationDelivery['status'];
  /** `Delivered`, `2 of 3 failed`, `1 pending`, `1 held`, `Not sent`. */
  text: string;
  targets: TargetView[];
}

/** A destination's name by id, else (its row is gone) its kind's. */
export function targetName(labels: ReadonlyMap<string, string>, id: string, kind: string): string {
  return labels.get(id) ?? KIND_NAMES[kind as DestinationKind] ?? kind;
}

/** The targets of an event, the reply URL first; null when it has no message at all. */
export function targetsSummary(
  event: { delivery: EventDelivery | null; deliveries: DestinationDelivery[] },
  labels: ReadonlyMap<string, string>,
): TargetsSummary | null {
  const targets: TargetView[] = [
    ...(event.delivery ? [{ name: 'Reply URL', status: event.delivery.status }] : []),
    ...event.deliveries.map((d) => ({
      name: targetName(labels, d.destination_id, d.kind),
      status: d.status,
    })),
  ];
  if (targets.length === 0) return null;
  const count = (status: TargetView['status']) => targets.filter((t) => t.status === status).length;
  // A destination whose `when` did not hold was skipped on purpose: not sent, and not an error.
  const meant = targets.length - count('skipped');
  const failed = count('failed');
  const pending = count('pending');
  const held = count('held');
  if (meant === 0) return { state: 'skipped', text: 'Not sent', targets };
  if (failed > 0)
    return {
      state: 'failed',
      text: meant === 1 ? 'Failed' : `${failed} of ${meant} failed`,
      targets,
    };
  if (pending > 0) return { state: 'pending', text: `${pending} pending`, targets };
  if (held > 0) return { state: 'held', text: `${held} held`, targets };
  return { state: 'delivered', text: 'Delivered', targets };
}

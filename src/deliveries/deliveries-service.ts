import { recordAudit } from '../audit/record-audit.js';
import type { Database } from '../db/database.js';
import { AppError } from '../platform/errors.js';
import type {
  DestinationDelivery,
  EventDeliveries,
  EventDelivery,
} from '../events/event-object.js';
import type { DestinationsService } from '../destinations/destinations-service.js';
import * as repo from './deliveries-repo.js';
import { deliveriesOfEvents, toDestinationDelivery, toEventDelivery } from './event-deliveries.js';
import { redeliver } from './queue-redeliver.js';

/** One attempt to deliver an event's reply, for Brain Logs. */
export interface DeliveryAttempt {
  attempted_at: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
  /** Where it was sent, without a secret; null for attempts recorded before migration 0031. */
  target: string | null;
  /** The start of the answer's body, secrets cut out; null when none came (or before 0031). */
  answer: string | null;
  /** Of the newest delivery, the one `delivery` on the event describes; else of an earlier outcome. */
  current: boolean;
}

/** A destination's record in the channel editor: its last messages and the share delivered. */
export interface DestinationRecord {
  /** The newest first, at most RECENT_SHOWN. */
  recent: (DestinationDelivery & { event_id: string })[];
  /** Delivered among the last ended (delivered or failed) messages, 0..1; null before any. */
  successRate: number | null;
}

const RECENT_SHOWN = 5;
/** How many of a destination's latest messages its success rate counts. */
const RATE_WINDOW = 100;

/** Reply delivery seen from the API and the panel: secrets, states, attempts, "deliver again". */
export class DeliveriesService {
  constructor(
    private readonly db: Database,
    /** The targets' room, which keeps the reply URL's signing secrets. */
    private readonly destinations: Pick<DestinationsService, 'replySecret' | 'rotateReplySecret'>,
  ) {}

  /** The channel's signing secret (`whsec_...`), made on first use. */
  replySecret(workspaceId: string, channelId: string): Promise<string> {
    return this.destinations.replySecret(workspaceId, channelId);
  }

  /** A new signing secret; the previous one keeps signing too for a while (its overlap). */
  rotateReplySecret(workspaceId: string, channelId: string): Promise<string> {
    return this.destinations.rotateReplySecret(workspaceId, channelId);
  }

  /** Each event's reply delivery and destination messages (the `delivery` and `deliveries` fields). */
  readonly deliveriesOf = (eventIds: string[]): Promise<Map<string, EventDeliveries>> =>
    deliveriesOfEvents(this.db, eventIds);

  /** The channel's most recent attempted delivery: "the last delivery result" in its editor. */
  async lastOfChannel(channelId: string): Promise<EventDelivery | undefined> {
    const row = await repo.lastChannelDelivery(this.db, channelId);
    return row ? toEventDelivery(row) : undefined;
  }

  /** Each destination of the channel (by id) with its last messages and its success rate. */
  async destinationRecords(channelId: string): Promise<Map<string, DestinationRecord>> {
    const rows = await repo.recentDestinationDeliveries(this.db, channelId, RATE_WINDOW);
    const records = new Map<string, DestinationRecord>();
    const ended = new Map<string, { delivered: number; all: number }>();
    for (const row of rows) {
      let record = records.get(row.destination_id);
      if (!record) records.set(row.destination_id, (record = { recent: [], successRate: null }));
      if (record.recent.length < RECENT_SHOWN)
        record.recent.push({ ...toDestinationDelivery(row), event_id: row.event_id });
      if (row.state !== 'delivered' && row.state !== 'failed') continue;
      const count = ended.get(row.destination_id) ?? { delivered: 0, all: 0 };
      count.all++;
      if (row.state === 'delivered') count.delivered++;
      ended.set(row.destination_id, count);
    }
    for (const [id, count] of ended) {
      const record = records.get(id);
      if (record) record.successRate = count.delivered / count.all;
    }
    return records;
  }

  /** Events received in [from, to) whose delivery to a target failed, by channel and target. */
  failures(
    workspaceId: string,
    channelId: string | undefined,
    from: Date,
    to: Date,
  ): Promise<repo.DeliveryFailureGroup[]> {
    return repo.deliveryFailureGroups(this.db, workspaceId, channelId, from, to, 12);
  }

  /** Every attempt made to deliver an event's reply, oldest first. */
  async attemptsOf(eventId: string): Promise<DeliveryAttempt[]> {
    const rows = await repo.attemptsOfEvent(this.db, eventId);
    return rows.map(attemptOf);
  }

  /** Every attempt at the event's newest message to each destination, by destination id. */
  async destinationAttemptsOf(eventId: string): Promise<Map<string, DeliveryAttempt[]>> {
    const rows = await repo.destinationAttemptsOfEvent(this.db, eventId);
    const byDestination = new Map<string, DeliveryAttempt[]>();
    for (const row of rows) {
      const attempts = byDestination.get(row.destination_id) ?? [];
      attempts.push(attemptOf(row));
      byDestination.set(row.destination_id, attempts);
    }
    return byDestination;
  }

  /**
   * "Deliver again": a failed or held delivery gets a fresh round of the retry schedule, due
   * now — every one of the event's, or only its message to `destinationId`.
   */
  async deliverAgain(workspaceId: string, eventId: string, destinationId?: string): Promise<void> {
    const redelivered = await this.db.transaction(async (tx) => {
      if (!(await redeliver(tx, workspaceId, eventId, destinationId))) return false;
      await recordAudit(tx, {
        workspaceId,
        action: 'event.redeliver',
        target: { kind: 'event', id: eventId },
        changes: destinationId === undefined ? {} : { destination_id: destinationId },
      });
      return true;
    });
    if (redelivered) return;
    throw new AppError(
      409,
      'delivery_not_failed',
      'Nothing to deliver again',
      'Only an event whose reply delivery failed, or is held while delivery is off, can be delivered again.',
    );
  }
}

function attemptOf(row: repo.AttemptRow): DeliveryAttempt {
  return {
    attempted_at: new Date(row.attempted_at).toISOString(),
    status: row.status,
    error: row.error,
    duration_ms: row.duration_ms,
    target: row.target,
    answer: row.answer,
    current: row.current,
  };
}

import type { Database, Queryable } from '../db/database.js';
import { toEventJson, type EventJson } from '../events/event-object.js';
import type { EventsStore } from '../events/events-store.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { GroupCommit } from '../db/group-commit.js';
import { QueueLoop } from '../queue/queue-loop.js';
import { queueWorkerId, type QueueSettings } from '../queue/queue-settings.js';
import { attemptDelivery, type AttemptDeps, type MessageAttempt } from './delivery-attempt.js';
import { deliveriesOfEvents } from './event-deliveries.js';
import { claimDeliveries, type ClaimedDelivery } from './queue-claim.js';
import { destinationMessage, messageSubject } from './destination-messages.js';
import { deliveryGone } from './queue-gone.js';
import { skipMessages } from './queue-skip.js';
import type { TransportDeps } from '../destinations/destination-transport.js';
import { replyUrlTarget, type DestinationToSend } from '../destinations/destinations-service.js';
import { markDelivered, type Delivered } from './queue-delivered.js';
import { fixMessages } from './queue-fix-messages.js';
import { releaseDelivery } from './queue-release.js';

/**
 * A claimed message and what its attempt needs (undefined: its event or its target is gone, or
 * the message was skipped).
 */
interface ReadyMessage {
  id: string;
  delivery: ClaimedDelivery;
  attempt: MessageAttempt | undefined;
}

/** The NOTIFY channel of migrations/0008: deliveries were created. */
export const DELIVERIES_CHANNEL = 'hookprompt_deliveries';

export interface DeliveryWorkerOptions extends QueueSettings {
  db: Database;
  /** Where the events of the messages are read (a message carries its event). */
  events: EventsStore;
  /** Opens the channels' reply URLs and secrets the messages are signed with. */
  secrets: SecretBox;
  /** The destinations of messages, their secrets opened (the destinations room's service). */
  destinations: (ids: string[]) => Promise<Map<string, DestinationToSend>>;
  /** Turns a channel's reply URL off once it answered 410, on the transaction given (ditto). */
  replyUrlGone: (db: Queryable, channelId: string, reason: string) => Promise<void>;
  /** What every message is sent with, the reply URL's too. */
  transports: TransportDeps & { close(): void };
  log: Logger;
  metrics: Metrics;
  /** Most messages in flight at once. */
  concurrency: number;
  retryScheduleMs: readonly number[];
  workerId?: string;
}

/**
 * Sends reply deliveries from their queue (the deliveries table) on the queue loop. Tests drive
 * `runOnce()`; the worker role calls `start()` and, on shutdown, `stop()`.
 */
export class DeliveryWorker {
  readonly id: string;
  private readonly deps: AttemptDeps;
  private readonly loop: QueueLoop<ReadyMessage>;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.id = options.workerId ?? queueWorkerId('delivery');
    const { db, concurrency } = options;
    // Sends that end while the previous record is being written are recorded together: one
    // commit for all of them, instead of one per message.
    const delivered = new GroupCommit<Delivered, boolean>(
      async (items, deadline) => {
        const ended = await markDelivered(db, this.id, items, deadline);
        return items.map((item) => ended.has(item.deliveryId));
      },
      { maxBatchSize: Math.max(1, concurrency), maxConcurrentWrites: 1 },
    );
    this.deps = {
      db,
      metrics: options.metrics,
      transports: options.transports,
      log: options.log,
      workerId: this.id,
      retryScheduleMs: options.retryScheduleMs,
      recordDelivered: (item) => delivered.submit(item, Date.now() + options.leaseMs),
      recordGone: (gone) =>
        db.transaction(async (tx) => {
          const channelId = await deliveryGone(tx, this.id, gone);
          if (channelId === undefined) return false;
          await options.replyUrlGone(tx, channelId, gone.reason);
          return true;
        }),
    };
    // A claim's worth of messages (one per slot) waits ready beside the slots, and while a
    // backlog lasts a claim is made once half a claim's worth is wanted: one claim and one read
    // of the events serve several messages. They wait under the claim's whole lease: a slot
    // frees up within one send's timeout, which the lease outlasts.
    this.loop = new QueueLoop<ReadyMessage>({
      name: 'delivery worker',
      items: 'deliveries',
      workerId: this.id,
      db,
      channel: DELIVERIES_CHANNEL,
      log: options.log,
      concurrency,
      pollIntervalMs: options.pollIntervalMs,
      shutdownGraceMs: options.shutdownGraceMs,
      ahead: {
        inBacklog: concurrency,
        otherwise: concurrency,
        minClaimInBacklog: Math.ceil(concurrency / 2),
      },
      claim: (limit) => this.claim(limit),
      release: ({ delivery }) => releaseDelivery(db, delivery.id, this.id),
      work: (message, signal) => this.send(message, signal),
    });
  }

  /** Claims as many due deliveries as the concurrency allows, sends them all, says how many. */
  runOnce(): Promise<number> {
    return this.loop.runOnce();
  }

  /** Keeps sending until `stop()`: woken by NOTIFY when deliveries are created, polling as a fallback. */
  start(): Promise<void> {
    return this.loop.start();
  }

  /** Stops claiming; lets messages in flight finish within the grace period, then gives the rest back. */
  async stop(): Promise<void> {
    await this.loop.stop();
    this.options.transports.close();
  }

  private async claim(limit: number): Promise<ReadyMessage[]> {
    const claimed = await claimDeliveries(
      this.options.db,
      this.options.secrets,
      this.id,
      limit,
      this.options.leaseMs,
    );
    const attempts = await this.attempts(claimed);
    return claimed.map((delivery) => ({
      id: delivery.id,
      delivery,
      attempt: attempts.get(delivery.id),
    }));
  }

  /**
   * Claimed messages, ready to go: each with its target (a destination, or the channel's reply
   * URL as the claim read it), and its message fixed before the first attempt and stored, or
   * skipped when the target's `when` does not hold or its message renders empty. The event is
   * read for a message not yet fixed, and for every attempt to a target with templated fields
   * (`chat_id` ...), which are rendered over its payload.
   */
  private async attempts(claimed: ClaimedDelivery[]): Promise<Map<string, MessageAttempt>> {
    if (claimed.length === 0) return new Map();
    const now = new Date();
    const destinations = await this.options.destinations(
      claimed.flatMap((d) => (d.destination_id === null ? [] : [d.destination_id])),
    );
    const targets = new Map<string, DestinationToSend>();
    for (const delivery of claimed) {
      const target =
        delivery.destination_id === null
          ? delivery.url === null
            ? undefined
            : replyUrlTarget(delivery.url)
          : destinations.get(delivery.destination_id);
      if (target) targets.set(delivery.id, target);
    }
    const reading = new Set(
      claimed.filter((delivery) => {
        const target = targets.get(delivery.id);
        return target && (delivery.message === null || Object.keys(target.settings.fields).length);
      }),
    );
    const events = await this.eventsOf([...reading].map((d) => d.event_id));
    const ready = new Map<string, MessageAttempt>();
    const fresh: { id: string; message: string }[] = [];
    const skipped: { id: string; why: string }[] = [];
    for (const delivery of claimed) {
      const target = targets.get(delivery.id);
      const event = events.get(delivery.event_id);
      if (!target || (!event && reading.has(delivery))) continue;
      const subject = event && messageSubject(event, delivery.channel_name);
      let message = delivery.message;
      if (message === null && event && subject) {
        const made = destinationMessage(target, subject, event, delivery.type, now);
        if ('skipped' in made) {
          skipped.push({ id: delivery.id, why: made.skipped });
          continue;
        }
        fresh.push({ id: delivery.id, message: made.message });
        message = made.message;
      }
      if (message === null) continue;
      ready.set(delivery.id, { delivery, target, message, payload: subject?.payload });
    }
    const [fixed] = await Promise.all([
      fixMessages(this.options.db, this.id, fresh),
      skipMessages(this.options.db, this.id, skipped),
    ]);
    for (const [id, message] of fixed) {
      const attempt = ready.get(id);
      if (attempt) attempt.message = message;
    }
    // A message this worker could not fix is no longer its own (its lease ran out).
    for (const { id } of fresh) if (!fixed.has(id)) ready.delete(id);
    return ready;
  }

  /**
   * The events of these messages as the API shows them, each with its own reply delivery: read
   * here, from the event store and this room's records, so that events never call back into
   * reply delivery.
   */
  private async eventsOf(ids: string[]): Promise<Map<string, EventJson>> {
    if (ids.length === 0) return new Map();
    const [rows, deliveries] = await Promise.all([
      this.options.events.findMany(ids),
      deliveriesOfEvents(this.options.db, ids),
    ]);
    return new Map(rows.map((row) => [row.id, toEventJson(row, deliveries.get(row.id))]));
  }

  private async send({ delivery, attempt }: ReadyMessage, signal: AbortSignal): Promise<void> {
    if (attempt === undefined) return;
    try {
      await attemptDelivery(this.deps, attempt, signal);
    } catch (error) {
      this.options.log.error(
        { err: error, deliveryId: delivery.id },
        'delivery not recorded; it is taken again when its lease ends',
      );
    }
  }
}

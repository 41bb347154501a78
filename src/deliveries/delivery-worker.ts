import type { Database } from '../db/database.js';
import { toEventJson, type EventJson } from '../events/event-object.js';
import type { EventsStore } from '../events/events-store.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OutboundClient } from '../outbound/outbound-client.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { GroupCommit } from '../db/group-commit.js';
import { QueueLoop } from '../queue/queue-loop.js';
import { queueWorkerId, type QueueSettings } from '../queue/queue-settings.js';
import { attemptDelivery, type AttemptDeps } from './delivery-attempt.js';
import { messageBody } from './delivery-message.js';
import { deliveriesOfEvents } from './event-deliveries.js';
import { claimDeliveries, isReply, type ClaimedDelivery } from './queue-claim.js';
import { attemptDestination, type DestinationAttempt } from './destination-attempt.js';
import { destinationMessage, messageSubject } from './destination-messages.js';
import { skipMessages } from './queue-skip.js';
import type { SenderDeps } from '../destinations/destination-sender.js';
import type { DestinationToSend } from '../destinations/destinations-service.js';
import { markDelivered, type Delivered } from './queue-delivered.js';
import { fixMessages } from './queue-fix-messages.js';
import { releaseDelivery } from './queue-release.js';

/**
 * A claimed message and the body it sends (undefined: its event is gone, or the message was
 * skipped); a message to a destination carries what its attempt needs.
 */
interface ReadyMessage {
  id: string;
  delivery: ClaimedDelivery;
  body: string | undefined;
  destination?: DestinationAttempt;
}

/** The NOTIFY channel of migrations/0008: deliveries were created. */
export const DELIVERIES_CHANNEL = 'hookprompt_deliveries';

export interface DeliveryWorkerOptions extends QueueSettings {
  db: Database;
  /** Where the events of the messages are read (a message carries its event). */
  events: EventsStore;
  client: OutboundClient;
  /** Opens the channels' reply secrets the messages are signed with. */
  secrets: SecretBox;
  /** The destinations of messages, their secrets opened (the destinations room's service). */
  destinations: (ids: string[]) => Promise<Map<string, DestinationToSend>>;
  /** What messages to destinations are sent with. */
  senders: SenderDeps & { close(): void };
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
  private readonly deps: AttemptDeps & { senders: SenderDeps };
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
      client: options.client,
      log: options.log,
      workerId: this.id,
      retryScheduleMs: options.retryScheduleMs,
      recordDelivered: (item) => delivered.submit(item, Date.now() + options.leaseMs),
      senders: options.senders,
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
    this.options.client.close();
    this.options.senders.close();
  }

  private async claim(limit: number): Promise<ReadyMessage[]> {
    const claimed = await claimDeliveries(
      this.options.db,
      this.options.secrets,
      this.id,
      limit,
      this.options.leaseMs,
    );
    const replies = claimed.filter(isReply);
    const toDestinations = claimed.filter((delivery) => delivery.destination_id !== null);
    const [bodies, attempts] = await Promise.all([
      this.bodiesOf(replies),
      this.destinationAttempts(toDestinations),
    ]);
    return claimed.map((delivery) => ({
      id: delivery.id,
      delivery,
      body: bodies.get(delivery.id) ?? attempts.get(delivery.id)?.message,
      destination: attempts.get(delivery.id),
    }));
  }

  /**
   * Messages to destinations, ready to go: the message fixed before the first attempt (and
   * stored, as reply delivery's body is), or the message skipped when the destination's `when`
   * does not hold or its message renders empty. The event is read for every attempt: the
   * destination's templated fields (`chat_id` ...) are rendered over its payload.
   */
  private async destinationAttempts(
    claimed: ClaimedDelivery[],
  ): Promise<Map<string, DestinationAttempt>> {
    if (claimed.length === 0) return new Map();
    const now = new Date();
    const [events, destinations] = await Promise.all([
      this.eventsOf(claimed.map((d) => d.event_id)),
      this.options.destinations(claimed.map((d) => d.destination_id as string)),
    ]);
    const ready = new Map<string, DestinationAttempt>();
    const fresh: { id: string; message: string }[] = [];
    const skipped: { id: string; why: string }[] = [];
    for (const delivery of claimed) {
      const event = events.get(delivery.event_id);
      const destination = destinations.get(delivery.destination_id as string);
      if (!event || !destination) continue;
      const subject = messageSubject(event, delivery.channel_name);
      let message = delivery.message;
      if (message === null) {
        const made = destinationMessage(destination, subject, event, delivery.type, now);
        if ('skipped' in made) {
          skipped.push({ id: delivery.id, why: made.skipped });
          continue;
        }
        fresh.push({ id: delivery.id, message: made.message });
        message = made.message;
      }
      ready.set(delivery.id, { delivery, destination, message, payload: subject.payload });
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

  /** The body each message sends: fixed before its first attempt and stored, reused afterwards. */
  private async bodiesOf(claimed: ClaimedDelivery[]): Promise<Map<string, string>> {
    if (claimed.length === 0) return new Map();
    const now = new Date();
    const unsent = claimed.filter((delivery) => delivery.message === null);
    const events = await this.eventsOf(unsent.map((d) => d.event_id));
    const fresh = unsent.flatMap((delivery) => {
      const event = events.get(delivery.event_id);
      return event ? [{ id: delivery.id, message: messageBody(delivery.type, event, now) }] : [];
    });
    const fixed = await fixMessages(this.options.db, this.id, fresh);
    for (const delivery of claimed)
      if (delivery.message !== null) fixed.set(delivery.id, delivery.message);
    return fixed;
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

  private async send(
    { delivery, body, destination }: ReadyMessage,
    signal: AbortSignal,
  ): Promise<void> {
    if (body === undefined) return;
    try {
      if (destination) await attemptDestination(this.deps, destination, signal);
      else if (isReply(delivery)) await attemptDelivery(this.deps, delivery, body, signal);
    } catch (error) {
      this.options.log.error(
        { err: error, deliveryId: delivery.id },
        'delivery not recorded; it is taken again when its lease ends',
      );
    }
  }
}

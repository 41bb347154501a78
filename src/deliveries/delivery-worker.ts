import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Database } from '../db/database.js';
import { toEventJson, type EventJson } from '../events/event-object.js';
import type { EventsStore } from '../events/events-store.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundClient } from '../outbound/outbound-client.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { GroupCommit } from '../db/group-commit.js';
import { QueueLoop } from '../queue/queue-loop.js';
import { attemptDelivery, type AttemptDeps } from './delivery-attempt.js';
import { messageBody } from './delivery-message.js';
import { deliveriesOfEvents } from './event-deliveries.js';
import { claimDeliveries, type ClaimedDelivery } from './queue-claim.js';
import { markDelivered, type Delivered } from './queue-delivered.js';
import { fixMessages } from './queue-fix-messages.js';
import { releaseDelivery } from './queue-release.js';

/** A claimed message and the body it sends (undefined: its event is gone). */
interface ReadyMessage {
  id: string;
  delivery: ClaimedDelivery;
  body: string | undefined;
}

/** The NOTIFY channel of migrations/0008: deliveries were created. */
export const DELIVERIES_CHANNEL = 'hookprompt_deliveries';

export interface DeliveryWorkerOptions {
  db: Database;
  /** Where the events of the messages are read (a message carries its event). */
  events: EventsStore;
  client: OutboundClient;
  /** Opens the channels' reply secrets the messages are signed with. */
  secrets: SecretBox;
  log: Logger;
  /** Most messages in flight at once. */
  concurrency: number;
  pollIntervalMs: number;
  leaseMs: number;
  retryScheduleMs: readonly number[];
  shutdownGraceMs: number;
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
    this.id =
      options.workerId ?? `${hostname()}:${process.pid}:delivery:${randomBytes(4).toString('hex')}`;
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
      client: options.client,
      log: options.log,
      workerId: this.id,
      retryScheduleMs: options.retryScheduleMs,
      recordDelivered: (item) => delivered.submit(item, Date.now() + options.leaseMs),
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
  }

  private async claim(limit: number): Promise<ReadyMessage[]> {
    const claimed = await claimDeliveries(
      this.options.db,
      this.options.secrets,
      this.id,
      limit,
      this.options.leaseMs,
    );
    const bodies = await this.bodiesOf(claimed);
    return claimed.map((delivery) => ({
      id: delivery.id,
      delivery,
      body: bodies.get(delivery.id),
    }));
  }

  /** The body each message sends: fixed before its first attempt and stored, reused afterwards. */
  private async bodiesOf(claimed: ClaimedDelivery[]): Promise<Map<string, string>> {
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

  private async send({ delivery, body }: ReadyMessage, signal: AbortSignal): Promise<void> {
    if (body === undefined) return;
    try {
      await attemptDelivery(this.deps, delivery, body, signal);
    } catch (error) {
      this.options.log.error(
        { err: error, deliveryId: delivery.id },
        'delivery not recorded; it is taken again when its lease ends',
      );
    }
  }
}

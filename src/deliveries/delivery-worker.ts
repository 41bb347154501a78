import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { Database } from '../db/database.js';
import type { EventsService } from '../events/events-service.js';
import type { Logger } from '../logger.js';
import type { OutboundClient } from '../outbound/outbound-client.js';
import { GroupCommit } from '../db/group-commit.js';
import { attemptDelivery, type AttemptDeps, type AttemptOutcome } from './delivery-attempt.js';
import { messageBody } from './delivery-message.js';
import { claimDeliveries, type ClaimedDelivery } from './queue-claim.js';
import { markDelivered, type Delivered } from './queue-delivered.js';
import { fixMessages } from './queue-fix-messages.js';
import { releaseDelivery } from './queue-release.js';

/** A claimed message and the body it sends (undefined: its event is gone). */
interface ReadyMessage {
  delivery: ClaimedDelivery;
  body: string | undefined;
}

/** The NOTIFY channel of migrations/0008: deliveries were created. */
export const DELIVERIES_CHANNEL = 'hookprompt_deliveries';

export interface DeliveryWorkerOptions {
  db: Database;
  events: EventsService;
  client: OutboundClient;
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
 * Sends reply deliveries from their queue (the deliveries table). Tests drive `runOnce()`; the
 * worker role calls `start()` and, on shutdown, `stop()`.
 */
export class DeliveryWorker {
  readonly id: string;
  private readonly deps: AttemptDeps;
  private readonly inFlight = new Map<string, Promise<AttemptOutcome | undefined>>();
  private readonly ready: ReadyMessage[] = [];
  private readonly shutdown = new AbortController();
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private stopping = false;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.id =
      options.workerId ?? `${hostname()}:${process.pid}:delivery:${randomBytes(4).toString('hex')}`;
    // Sends that end while the previous record is being written are recorded together: one
    // commit for all of them, instead of one per message.
    const delivered = new GroupCommit<Delivered, boolean>(
      async (items, deadline) => {
        const ended = await markDelivered(options.db, this.id, items, deadline);
        return items.map((item) => ended.has(item.deliveryId));
      },
      { maxBatchSize: Math.max(1, options.concurrency), maxConcurrentWrites: 1 },
    );
    this.deps = {
      db: options.db,
      client: options.client,
      log: options.log,
      workerId: this.id,
      retryScheduleMs: options.retryScheduleMs,
      recordDelivered: (item) => delivered.submit(item, Date.now() + options.leaseMs),
    };
  }

  /** Claims as many due deliveries as the concurrency allows, sends them all, says how many. */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.options.concurrency - this.inFlight.size);
    const tasks = claimed.map(({ delivery, body }) => this.track(delivery, body));
    await Promise.all(tasks);
    return tasks.length;
  }

  /** Keeps sending until `stop()`: woken by NOTIFY when deliveries are created, polling as a fallback. */
  async start(): Promise<void> {
    if (this.loop || this.stopping) return;
    try {
      this.unlisten = await this.options.db.listen(DELIVERIES_CHANNEL, () => this.wake());
    } catch (error) {
      this.options.log.warn({ err: error }, 'cannot listen for new deliveries; polling only');
    }
    this.loop = this.run();
  }

  /** Stops claiming; lets messages in flight finish within the grace period, then gives the rest back. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loop;
    // Claimed but never started: given back now rather than when their lease ends.
    const unsent = this.ready.splice(0);
    await Promise.all(
      unsent.map(({ delivery }) =>
        releaseDelivery(this.options.db, delivery.id, this.id).catch(() => false),
      ),
    );
    await this.unlisten?.().catch(() => undefined);
    this.unlisten = undefined;
    const all = Promise.all(this.inFlight.values());
    const grace = new AbortController();
    const drained = await Promise.race([
      all.then(() => true),
      delay(this.options.shutdownGraceMs, false, { signal: grace.signal }).catch(() => false),
    ]);
    grace.abort();
    if (!drained) {
      this.shutdown.abort(new Error('delivery worker stopping'));
      await all;
    }
    this.options.client.close();
  }

  /**
   * Keeps every slot busy while messages are due. Up to one claim's worth of messages waits
   * ready beside the slots, so a slot that frees up starts its next send at once instead of
   * waiting for a claim's round trips; while a backlog lasts, a claim is made once half a
   * claim's worth is wanted, so one claim (and one read of the events) serves several messages.
   */
  private async run(): Promise<void> {
    const { concurrency } = this.options;
    let backlog = false;
    while (!this.stopping) {
      this.startReady();
      const wanted = 2 * concurrency - this.inFlight.size - this.ready.length;
      if (wanted > 0 && (!backlog || wanted >= Math.ceil(concurrency / 2))) {
        try {
          const claimed = await this.claim(wanted);
          this.ready.push(...claimed);
          // All wanted were due: more probably are; a finished send wakes the sleep below.
          backlog = claimed.length === wanted;
          if (backlog) continue;
        } catch (error) {
          backlog = false;
          this.options.log.error({ err: error }, 'claiming deliveries failed; trying again later');
        }
      }
      this.startReady();
      await this.sleep(this.options.pollIntervalMs);
    }
  }

  private startReady(): void {
    while (this.inFlight.size < this.options.concurrency && this.ready.length > 0) {
      const { delivery, body } = this.ready.shift() as ReadyMessage;
      void this.track(delivery, body);
    }
  }

  private async claim(limit: number): Promise<ReadyMessage[]> {
    if (limit <= 0) return [];
    // A notification from here on may be for a delivery this claim misses: it wakes the next sleep.
    this.woken = false;
    const { db, leaseMs } = this.options;
    const claimed = await claimDeliveries(db, this.id, limit, leaseMs);
    const bodies = await this.bodiesOf(claimed);
    return claimed.map((delivery) => ({ delivery, body: bodies.get(delivery.id) }));
  }

  /** The body each message sends: fixed before its first attempt and stored, reused afterwards. */
  private async bodiesOf(claimed: ClaimedDelivery[]): Promise<Map<string, string>> {
    const now = new Date();
    const unsent = claimed.filter((delivery) => delivery.message === null);
    const events = await this.options.events.getMany(unsent.map((d) => d.event_id));
    const fresh = unsent.flatMap((delivery) => {
      const event = events.get(delivery.event_id);
      return event ? [{ id: delivery.id, message: messageBody(delivery.type, event, now) }] : [];
    });
    const fixed = await fixMessages(this.options.db, this.id, fresh);
    for (const delivery of claimed)
      if (delivery.message !== null) fixed.set(delivery.id, delivery.message);
    return fixed;
  }

  private track(
    delivery: ClaimedDelivery,
    body: string | undefined,
  ): Promise<AttemptOutcome | undefined> {
    const running = this.inFlight.get(delivery.id);
    if (running) return running;
    if (body === undefined) return Promise.resolve('lost');
    const task = attemptDelivery(this.deps, delivery, body, this.shutdown.signal)
      .catch((error: unknown) => {
        this.options.log.error(
          { err: error, deliveryId: delivery.id },
          'delivery not recorded; it is taken again when its lease ends',
        );
        return undefined;
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        this.wake();
      });
    this.inFlight.set(delivery.id, task);
    return task;
  }

  private wake(): void {
    const wakeSleeper = this.wakeSleeper;
    this.wakeSleeper = undefined;
    if (wakeSleeper) wakeSleeper();
    else this.woken = true;
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopping) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeSleeper = undefined;
        resolve();
      }, ms);
      this.wakeSleeper = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

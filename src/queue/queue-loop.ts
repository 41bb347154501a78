import { setTimeout as delay } from 'node:timers/promises';
import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { QueueWake } from './queue-wake.js';

/** An item of a queue, as its claim returns it: anything with the id its statements know it by. */
export interface QueueItem {
  readonly id: string;
}

/**
 * How far ahead of its free slots a loop claims. Items claimed ahead wait ready beside the
 * slots, so a slot that frees up starts its next item at once instead of after a claim's round
 * trip; they wait under the lease their claim gave them, and `stop()` gives them back.
 */
export interface ClaimAhead {
  /** Items claimed beyond the free slots while a backlog lasts (the last claim got all it wanted). */
  inBacklog: number;
  /** Items claimed beyond the free slots when no backlog is known. */
  otherwise: number;
  /**
   * While a backlog lasts, the fewest items worth a claim: fewer wanted wait for more slots to
   * free up, so claims, not the work, do not become the limit.
   */
  minClaimInBacklog: number;
}

/** Claim only for the free slots, whenever one is free. */
const NO_CLAIM_AHEAD: ClaimAhead = { inBacklog: 0, otherwise: 0, minClaimInBacklog: 1 };

/** What a worker gives the loop: its name, its queue's statements, and its work. */
export interface QueueLoopOptions<Item extends QueueItem> {
  /** Names the worker in log lines and in the reason its work is cut short: "delivery worker". */
  name: string;
  /** The queue's items in log lines: "events". */
  items: string;
  /** The worker's id, as its statements write it into `locked_by`. */
  workerId: string;
  db: Pick<Database, 'listen'>;
  /** The NOTIFY channel on which the queue says items were added; without one, `start()` polls. */
  channel?: string;
  log: Logger;
  /** Most items worked on at the same time. */
  concurrency: number;
  pollIntervalMs: number;
  /** How long `stop()` lets work in progress finish before cutting it short. */
  shutdownGraceMs: number;
  /** How far ahead of its free slots the loop claims; by default not at all. */
  ahead?: ClaimAhead;
  /** Claims up to `limit` due items for this worker, in one statement that commits. */
  claim(limit: number): Promise<Item[]>;
  /** Gives back an item claimed and never started, due at once. */
  release(item: Item): Promise<unknown>;
  /**
   * Works on one item and stores its outcome; must not reject (it logs its own failures).
   * `signal` aborts when `stop()`'s grace period is over: the work then gives its item back.
   * `freeSlot()` lets the next item start before this one's outcome is stored; such items count
   * against the concurrency again once another `concurrency` of them wait to be stored.
   */
  work(item: Item, signal: AbortSignal, freeSlot: () => void): Promise<unknown>;
  /** Whether this item's end may make others due at once (the next event of a thread). */
  unblocksOthers?(item: Item): boolean;
}

/**
 * The loop every queue worker runs: claims due items, keeps every slot busy while a backlog
 * lasts, sleeps until a NOTIFY, a freed slot or the poll interval when there is none, and stops
 * in order. Tests drive `runOnce()`; the service calls `start()` and, on shutdown, `stop()`.
 */
export class QueueLoop<Item extends QueueItem> {
  private readonly inFlight = new Map<string, Promise<unknown>>();
  /** The items of `inFlight` that hold one of the `concurrency` slots (see `work`). */
  private readonly slots = new Set<string>();
  /** Claimed ahead, not yet started: each waits for a free slot. */
  private readonly ready: Item[] = [];
  private readonly ahead: ClaimAhead;
  private readonly wake = new QueueWake();
  private readonly shutdown = new AbortController();
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private stopping = false;
  /** The last claim got every item it asked for, so more are probably due. */
  private backlog = false;

  constructor(private readonly options: QueueLoopOptions<Item>) {
    this.ahead = options.ahead ?? NO_CLAIM_AHEAD;
  }

  /** Claims as many due items as the concurrency allows, works on them all, and says how many. */
  async runOnce(): Promise<number> {
    const batch = await this.claim(this.options.concurrency - this.inFlight.size);
    await Promise.all(batch.map((item) => this.track(item)));
    return batch.length;
  }

  /** Keeps working until `stop()`: woken by NOTIFY when items are added, polling as a fallback. */
  async start(): Promise<void> {
    if (this.loop || this.stopping) return;
    const { db, channel, log, items, name, workerId, concurrency } = this.options;
    try {
      if (channel) this.unlisten = await db.listen(channel, () => this.wake.wake());
    } catch (error) {
      log.warn({ err: error }, `cannot listen for new ${items}; polling only`);
    }
    this.loop = this.run();
    log.info({ workerId, concurrency }, `${name} started`);
  }

  /**
   * Stops claiming and gives back the items claimed ahead, lets work in progress finish for up
   * to the grace period, then cuts the rest short (their work gives their items back).
   */
  async stop(): Promise<void> {
    const { log, name, items, workerId, shutdownGraceMs } = this.options;
    this.stopping = true;
    this.wake.cancelTimer();
    this.wake.wake();
    await this.loop;
    // Given back now rather than when their lease ends.
    const unstarted = this.ready.splice(0);
    await Promise.all(unstarted.map((item) => this.options.release(item).catch(() => false)));
    await this.unlisten?.().catch(() => undefined);
    this.unlisten = undefined;
    const all = Promise.all(this.inFlight.values());
    const grace = new AbortController();
    const drained = await Promise.race([
      all.then(() => true),
      delay(shutdownGraceMs, false, { signal: grace.signal }).catch(() => false),
    ]);
    grace.abort();
    if (!drained) {
      log.warn(
        { inFlight: this.inFlight.size },
        `shutdown grace over; releasing unfinished ${items}`,
      );
      this.shutdown.abort(new Error(`${name} stopping`));
      await all;
    }
    if (this.loop) log.info({ workerId }, `${name} stopped`);
  }

  /** Wakes the loop in `ms` (an item due then, such as a retry), rather than at the next poll. */
  wakeIn(ms: number): void {
    if (!this.stopping) this.wake.wakeIn(ms);
  }

  /**
   * Keeps every slot busy while items are due: claims for the free slots and, per `ahead`, for
   * items to wait ready beside them; while a backlog lasts, claims again at once, but only once
   * `minClaimInBacklog` items are wanted.
   */
  private async run(): Promise<void> {
    const { inBacklog, otherwise, minClaimInBacklog } = this.ahead;
    while (!this.stopping) {
      this.startReady();
      const wanted = this.freeSlots() + (this.backlog ? inBacklog : otherwise) - this.ready.length;
      if (wanted > 0 && (!this.backlog || wanted >= minClaimInBacklog)) {
        try {
          const batch = await this.claim(wanted);
          const known = new Set(this.ready.map((item) => item.id));
          // An item of its own claimed again (it waited past its lease): it is still held.
          this.ready.push(...batch.filter((item) => !known.has(item.id)));
          this.startReady();
          this.backlog = batch.length === wanted;
        } catch (error) {
          this.backlog = false;
          this.options.log.error(
            { err: error },
            `claiming ${this.options.items} failed; trying again after the poll interval`,
          );
        }
        if (this.backlog) continue;
      }
      // Woken early by a notification, a timer, or a freed slot while there is a backlog.
      if (!this.stopping) await this.wake.sleep(this.options.pollIntervalMs);
    }
  }

  private startReady(): void {
    while (this.ready.length > 0 && this.freeSlots() > 0) {
      if (this.stopping) return;
      void this.track(this.ready.shift() as Item);
    }
  }

  /**
   * Slots not taken by an item whose work holds its slot; items whose outcome waits to be stored
   * count only beyond another `concurrency` of them, so a slow database holds claims back
   * instead of letting unstored outcomes pile up.
   */
  private freeSlots(): number {
    const { concurrency } = this.options;
    return Math.min(concurrency - this.slots.size, 2 * concurrency - this.inFlight.size);
  }

  private async claim(limit: number): Promise<Item[]> {
    if (limit <= 0) return [];
    // A notification arriving from here on may be for an item this claim misses: it wakes the
    // next sleep.
    this.wake.forget();
    return this.options.claim(limit);
  }

  private track(item: Item): Promise<unknown> {
    // Claimed again while still in work here (its lease ran out meanwhile): the first task still
    // holds the lease under this worker's id and stores the outcome.
    const running = this.inFlight.get(item.id);
    if (running) return running;
    this.slots.add(item.id);
    const task = this.options
      .work(item, this.shutdown.signal, () => this.freeSlot(item.id))
      .catch((error: unknown) => {
        // Work that broke its promise not to reject: the item keeps its lease until it ends.
        this.options.log.error({ err: error, id: item.id }, `${this.options.name}: work failed`);
      })
      .finally(() => {
        this.slots.delete(item.id);
        this.inFlight.delete(item.id);
        this.startReady();
        if (this.backlog || this.options.unblocksOthers?.(item)) this.wake.wake();
      });
    this.inFlight.set(item.id, task);
    return task;
  }

  private freeSlot(id: string): void {
    if (!this.slots.delete(id)) return;
    this.startReady();
    if (this.backlog) this.wake.wake();
  }
}

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { AiProvider } from '../ai/ai-provider.js';
import type { Database } from '../db/database.js';
import { GroupCommit } from '../db/group-commit.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { processEvent, type ProcessDeps, type ProcessOutcome } from './process-event.js';
import { claimEvents, nextRotation, NO_ROTATION, type ClaimedEvent } from './queue-claim.js';
import { finishEvents, type Finish } from './queue-finish.js';
import { releaseEvent } from './queue-release.js';
import { startAttempts, type Start } from './queue-start-attempt.js';

/** The NOTIFY channel of migrations/0002_queue_notify.sql. */
export const EVENTS_CHANNEL = 'hookprompt_events';

/**
 * The lease of a claim, until each event's attempt starts and renews it to the full lease:
 * events claimed ahead wait for a slot under it, so a worker that dies holds those for this
 * long, not for a whole lease (an AI call's limit and more).
 */
export const READY_LEASE_MS = 10_000;

export interface WorkerOptions {
  db: Database;
  provider: AiProvider;
  log: Logger;
  metrics: Metrics;
  /** Most events answered at the same time by this worker. */
  concurrency: number;
  pollIntervalMs: number;
  leaseMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** AI_MAX_INPUT_CHARS. */
  maxInputChars: number;
  shutdownGraceMs: number;
  /** Names this worker in `locked_by`; unique per worker by default. */
  workerId?: string;
  /** AI_MODEL, recorded on events of channels that name no model. */
  defaultModel?: string;
}

/**
 * Answers events from the queue (the events table). Tests drive `runOnce()`; the service calls
 * `start()` and, on shutdown, `stop()`.
 */
export class Worker {
  readonly id: string;
  private readonly deps: ProcessDeps;
  private readonly inFlight = new Map<string, Promise<ProcessOutcome | undefined>>();
  /**
   * The events of `inFlight` that hold one of the `concurrency` slots: claimed and not yet past
   * their AI call. An event whose call is over waits for its result to be stored without a slot,
   * so the next event's call need not wait for that commit.
   */
  private readonly slots = new Set<string>();
  /** Claimed ahead while a backlog lasts, not yet started: each waits for a free slot. */
  private readonly ready: ClaimedEvent[] = [];
  private readonly shutdown = new AbortController();
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private stopping = false;
  /** The last claim filled every free slot, so more events are probably due. */
  private backlog = false;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  /** Where the next claim starts its fair turns (see `claimEvents`). */
  private rotation = NO_ROTATION;
  private wakeAt = 0;

  constructor(private readonly options: WorkerOptions) {
    // pid alone is not enough: in a container every restart is pid 1 on the same host name.
    this.id = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    const { db, provider, log, metrics, leaseMs, maxAttempts, retryBaseMs } = options;
    // The calls of one claim start together, and events that end while the previous finish is
    // being written are ended together: one statement and one commit for each group, instead
    // of one per event.
    const started = new GroupCommit<Start, number | undefined>(
      async (items, deadline) => {
        const attempts = await startAttempts(db, this.id, leaseMs, items, deadline);
        return items.map((item) => attempts.get(item.eventId));
      },
      { maxBatchSize: Math.max(1, options.concurrency), maxConcurrentWrites: 2 },
    );
    const finished = new GroupCommit<Finish, boolean>(
      async (items, deadline) => {
        const ended = await finishEvents(db, this.id, items, deadline);
        return items.map((item) => ended.has(item.eventId));
      },
      { maxBatchSize: Math.max(1, options.concurrency), maxConcurrentWrites: 1 },
    );
    this.deps = {
      db,
      provider,
      log,
      metrics,
      leaseMs,
      maxAttempts,
      retryBaseMs,
      maxInputChars: options.maxInputChars,
      workerId: this.id,
      defaultModel: options.defaultModel,
      onRetryScheduled: (dueInMs) => this.wakeIn(dueInMs),
      // By the lease's end neither can be stored anyway.
      recordStarted: (item) => started.submit(item, Date.now() + leaseMs),
      recordFinished: (item) => finished.submit(item, Date.now() + leaseMs),
    };
  }

  /** Claims as many due events as the concurrency allows, answers them all, and says how many. */
  async runOnce(): Promise<number> {
    const batch = await this.claim(this.options.concurrency - this.inFlight.size);
    await Promise.all(batch.map((event) => this.track(event)));
    return batch.length;
  }

  /** Keeps answering events until `stop()`: woken by NOTIFY when events arrive, polling as a fallback. */
  async start(): Promise<void> {
    if (this.loop || this.stopping) return;
    try {
      this.unlisten = await this.options.db.listen(EVENTS_CHANNEL, () => this.wake());
    } catch (error) {
      this.options.log.warn({ err: error }, 'cannot listen for new events; polling only');
    }
    this.loop = this.run();
    this.options.log.info(
      { workerId: this.id, concurrency: this.options.concurrency },
      'worker started',
    );
  }

  /**
   * Stops claiming, lets in-flight events finish for up to the shutdown grace period, then cuts
   * the remaining AI calls short and gives their events back to the queue.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.wakeTimer);
    this.wake();
    await this.loop;
    // Claimed ahead but never started: given back now rather than when their lease ends.
    const unstarted = this.ready.splice(0);
    await Promise.all(
      unstarted.map((event) => releaseEvent(this.options.db, event.id, this.id).catch(() => false)),
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
      this.options.log.warn(
        { inFlight: this.inFlight.size },
        'shutdown grace over; releasing unanswered events',
      );
      this.shutdown.abort(new Error('worker stopping'));
      await all;
    }
    if (this.loop) this.options.log.info({ workerId: this.id }, 'worker stopped');
  }

  /**
   * Keeps every slot busy while events are due. While a backlog lasts, a claim's worth of events
   * waits ready beside the slots, so a slot that frees up starts its next event at once instead
   * of waiting for a claim's round trip; and a claim is made only once an eighth of the slots'
   * worth is wanted: a claim for each finished event would make claims, not the AI, the limit
   * (each walks the queue's turns).
   */
  private async run(): Promise<void> {
    const claimSize = Math.ceil(this.options.concurrency / 8);
    while (!this.stopping) {
      this.startReady();
      const wanted = this.freeSlots() + (this.backlog ? claimSize : 0) - this.ready.length;
      if (wanted > 0 && (!this.backlog || wanted >= claimSize)) {
        try {
          const batch = await this.claim(wanted);
          const known = new Set(this.ready.map((event) => event.id));
          // Its own event claimed again (it waited past the ready lease): it is still held.
          this.ready.push(...batch.filter((event) => !known.has(event.id)));
          this.startReady();
          this.backlog = batch.length === wanted;
        } catch (error) {
          this.backlog = false;
          this.options.log.error(
            { err: error },
            'claiming events failed; trying again after the poll interval',
          );
        }
        if (this.backlog) continue;
      }
      // Woken early by a notification, or by a freed slot while there is a backlog.
      await this.sleep(this.options.pollIntervalMs);
    }
  }

  private startReady(): void {
    while (this.ready.length > 0 && this.freeSlots() > 0) {
      if (this.stopping) return;
      void this.track(this.ready.shift() as ClaimedEvent);
    }
  }

  /**
   * Slots not taken by an event before or in its AI call; events whose results wait to be
   * stored count only beyond another `concurrency` of them, so a slow database holds claims
   * back instead of letting unstored results pile up.
   */
  private freeSlots(): number {
    const { concurrency } = this.options;
    return Math.min(concurrency - this.slots.size, 2 * concurrency - this.inFlight.size);
  }

  private async claim(limit: number): Promise<ClaimedEvent[]> {
    if (limit <= 0) return [];
    // A notification arriving from here on may be for an event this claim misses: it wakes the next sleep.
    this.woken = false;
    const { db, leaseMs } = this.options;
    const lease = Math.min(leaseMs, READY_LEASE_MS);
    const claimed = await claimEvents(db, this.id, limit, lease, this.rotation);
    this.rotation = nextRotation(this.rotation, claimed);
    return claimed;
  }

  private track(event: ClaimedEvent): Promise<ProcessOutcome | undefined> {
    // Claimed again while still being answered here (its lease ran out mid-call): the first
    // task still owns the lease under this worker's name and stores the result.
    const running = this.inFlight.get(event.id);
    if (running) return running;
    this.slots.add(event.id);
    const task = processEvent(this.deps, event, this.shutdown.signal, () => this.freeSlot(event.id))
      .catch((error: unknown) => {
        this.options.log.error(
          { err: error, eventId: event.id },
          'event not finished; it is taken again when its lease ends',
        );
        return undefined;
      })
      .finally(() => {
        this.slots.delete(event.id);
        this.inFlight.delete(event.id);
        this.startReady();
        // The next event of a thread becomes due only now that this one is finished.
        if (this.backlog || event.thread_key !== null) this.wake();
      });
    this.inFlight.set(event.id, task);
    return task;
  }

  private freeSlot(eventId: string): void {
    if (!this.slots.delete(eventId)) return;
    this.startReady();
    if (this.backlog) this.wake();
  }

  /**
   * Wakes the loop when a retried event is due, so a server's `Retry-After` is kept to the
   * millisecond rather than to the next poll. One timer: the earliest due time wins.
   */
  private wakeIn(ms: number): void {
    if (this.stopping) return;
    const at = Date.now() + Math.max(0, ms);
    if (this.wakeTimer && this.wakeAt <= at) return;
    clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wake();
    }, at - Date.now());
    this.wakeTimer.unref();
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

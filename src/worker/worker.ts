import type { RequestDeps } from './event-request.js';
import type { AiProvider } from '../ai/ai-provider.js';
import type { Prices } from '../ai/call-cost.js';
import type { Database } from '../db/database.js';
import { GroupCommit } from '../db/group-commit.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { QueueLoop } from '../queue/queue-loop.js';
import { queueWorkerId, type QueueSettings } from '../queue/queue-settings.js';
import type { WorkspaceProviders } from '../ai/call-targets.js';
import type { SpentCall } from '../spend/spend-ledger.js';
import { withEventSpan } from '../tracing/tracing.js';
import { processEvent, type ProcessDeps } from './process-event.js';
import { claimEvents, nextRotation, NO_ROTATION, type ClaimedEvent } from './queue-claim.js';
import { finishEvents, type Finish } from './queue-finish.js';
import { releaseEvent } from './queue-release.js';
import { serveFromCache, type Served } from './queue-reply-cache.js';
import { startAttempts, type OVER_BUDGET, type Start } from './queue-start-attempt.js';

/** The NOTIFY channel of migrations/0002_queue_notify.sql. */
export const EVENTS_CHANNEL = 'hookprompt_events';

/**
 * The lease of a claim, until each event's attempt starts and renews it to the full lease:
 * events claimed ahead wait for a slot under it, so a worker that dies holds those for this
 * long, not for a whole lease (an AI call's limit and more).
 */
export const READY_LEASE_MS = 10_000;

/** APPROVAL_TIMEOUT_S's default, for workers built without the configuration (tests). */
const DEFAULT_APPROVAL_TIMEOUT_S = 86_400;

export interface WorkerOptions extends QueueSettings {
  db: Database;
  /** The built-in provider `default` (the server's AI_* configuration). */
  provider: AiProvider;
  /** The workspaces' own providers, as this process calls them. */
  providers?: WorkspaceProviders;
  log: Logger;
  metrics: Metrics;
  /** Most events answered at the same time by this worker. */
  concurrency: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** AI_MAX_INPUT_CHARS. */
  maxInputChars: number;
  /** Names this worker in `locked_by`; unique per worker by default. */
  workerId?: string;
  /** AI_MODEL, recorded on events of channels that name no model. */
  defaultModel?: string;
  /** How a workspace's calls through a provider of a kind are priced (PricesService.pricesFor). */
  pricesFor: (workspaceId: string, kind: string) => Promise<Prices>;
  /** Records each call's spend (SpendLedger.recordSpend). */
  recordSpend: (call: SpentCall) => Promise<void>;
  /** Opens the tools a channel names for one attempt (ToolsService.openToolbox). */
  openToolbox?: RequestDeps['openToolbox'];
  /** Fetches the images a channel's `ai.images` name (ATTACHMENT_*). */
  imageFetcher?: RequestDeps['imageFetcher'];
  /** APPROVAL_TIMEOUT_S (default 86,400). */
  approvalTimeoutS?: number;
}

/**
 * Answers events from the queue (the events table) on the queue loop. Tests drive `runOnce()`;
 * the service calls `start()` and, on shutdown, `stop()`.
 */
export class Worker {
  readonly id: string;
  private readonly deps: ProcessDeps;
  private readonly loop: QueueLoop<ClaimedEvent>;
  /** Where the next claim starts its fair turns (see `claimEvents`). */
  private rotation = NO_ROTATION;

  constructor(private readonly options: WorkerOptions) {
    this.id = options.workerId ?? queueWorkerId();
    const { db, provider, log, metrics, concurrency, leaseMs, maxAttempts, retryBaseMs } = options;
    // The calls of one claim start together, and events that end while the previous finish is
    // being written are ended together: one statement and one commit for each group, instead
    // of one per event.
    const started = new GroupCommit<Start, number | typeof OVER_BUDGET | undefined>(
      async (items, deadline) => {
        const attempts = await startAttempts(db, this.id, leaseMs, items, deadline);
        return items.map((item) => attempts.get(item.eventId));
      },
      { maxBatchSize: Math.max(1, concurrency), maxConcurrentWrites: 2 },
    );
    const finished = new GroupCommit<Finish, boolean>(
      async (items, deadline) => {
        const ended = await finishEvents(db, this.id, items, deadline);
        return items.map((item) => ended.has(item.eventId));
      },
      { maxBatchSize: Math.max(1, concurrency), maxConcurrentWrites: 1 },
    );
    const served = new GroupCommit<Served, boolean>(
      async (items, deadline) => {
        const ended = await serveFromCache(db, this.id, items, deadline);
        return items.map((item) => ended.has(item.eventId));
      },
      { maxBatchSize: Math.max(1, concurrency), maxConcurrentWrites: 1 },
    );
    this.deps = {
      db,
      provider,
      providers: options.providers,
      log,
      metrics,
      leaseMs,
      maxAttempts,
      retryBaseMs,
      maxInputChars: options.maxInputChars,
      workerId: this.id,
      defaultModel: options.defaultModel,
      // A server's `Retry-After` is kept to the millisecond rather than to the next poll.
      onRetryScheduled: (dueInMs) => this.loop.wakeIn(dueInMs),
      // By the lease's end neither can be stored anyway.
      recordStarted: (item) => started.submit(item, Date.now() + leaseMs),
      recordFinished: (item) => finished.submit(item, Date.now() + leaseMs),
      recordServed: (item) => served.submit(item, Date.now() + leaseMs),
      pricesFor: options.pricesFor,
      recordSpend: options.recordSpend,
      openToolbox: options.openToolbox,
      imageFetcher: options.imageFetcher,
      approvalTimeoutS: options.approvalTimeoutS ?? DEFAULT_APPROVAL_TIMEOUT_S,
    };
    // While a backlog lasts, an eighth of the slots' worth of events waits ready (under the short
    // ready lease), and a claim is made only once that many are wanted: a claim for each finished
    // event made claims, not the AI, the limit (each walks the queue's turns).
    const claimSize = Math.ceil(concurrency / 8);
    this.loop = new QueueLoop<ClaimedEvent>({
      name: 'worker',
      items: 'events',
      workerId: this.id,
      db,
      channel: EVENTS_CHANNEL,
      log,
      concurrency,
      pollIntervalMs: options.pollIntervalMs,
      shutdownGraceMs: options.shutdownGraceMs,
      ahead: { inBacklog: claimSize, otherwise: 0, minClaimInBacklog: claimSize },
      claim: (limit) => this.claim(limit),
      release: (event) => releaseEvent(db, event.id, this.id),
      work: (event, signal, freeSlot) => this.answer(event, signal, freeSlot),
      // The next event of a thread becomes due only once this one is finished.
      unblocksOthers: (event) => event.thread_key !== null,
    });
  }

  /** Claims as many due events as the concurrency allows, answers them all, and says how many. */
  runOnce(): Promise<number> {
    return this.loop.runOnce();
  }

  /** Keeps answering events until `stop()`: woken by NOTIFY when events arrive, polling as a fallback. */
  start(): Promise<void> {
    return this.loop.start();
  }

  /**
   * Stops claiming, lets in-flight events finish for up to the shutdown grace period, then cuts
   * the remaining AI calls short and gives their events back to the queue.
   */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async claim(limit: number): Promise<ClaimedEvent[]> {
    const lease = Math.min(this.options.leaseMs, READY_LEASE_MS);
    const claimed = await claimEvents(this.options.db, this.id, limit, lease, this.rotation);
    this.rotation = nextRotation(this.rotation, claimed);
    return claimed;
  }

  /** The slot is free once the AI call is over: storing the reply does not hold up the next call. */
  private async answer(event: ClaimedEvent, signal: AbortSignal, freeSlot: () => void) {
    try {
      await withEventSpan(event, (chatParent) =>
        processEvent(this.deps, event, signal, freeSlot, chatParent),
      );
    } catch (error) {
      this.options.log.error(
        { err: error, eventId: event.id },
        'event not finished; it is taken again when its lease ends',
      );
    }
  }
}

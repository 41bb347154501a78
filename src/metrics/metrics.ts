import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReplyOutcomeStatus } from '../events/event-states.js';
import { logToStandardOutput } from '../platform/log-output.js';

/** What the queue gauges show; read from the database by the worker's queue statements. */
export interface QueueStats {
  pending: number;
  processing: number;
  /** Seconds since the oldest pending event arrived; 0 when none is pending. */
  oldestPendingAgeSeconds: number;
}

/** The `model` label of calls to a model neither the price table nor the workspace prices. */
export const OTHER_MODEL = 'other';

/**
 * The `model` label of a workspace's call: the model's name when the price table or the
 * workspace's own prices know it, else OTHER_MODEL. So the label has as many values as there
 * are prices, however many names channels and trials make up. Never rejects.
 */
export type ModelLabel = (workspaceId: string, model: string | null) => Promise<string>;

/** How the worker left an event: finished, or put back for another attempt. */
export type ReplyOutcome = ReplyOutcomeStatus | 'retried';

/**
 * The service's Prometheus metrics, on a registry of their own (not prom-client's global one),
 * so several contexts in one process (the tests) never share counters.
 * Counters are per process: the web role counts webhook requests, the worker role replies.
 * The queue gauges are read from the database at scrape time and so are the same everywhere.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly eventsReceived = new Counter({
    name: 'hookprompt_events_received_total',
    help: 'Webhook events accepted and stored for a reply.',
    registers: [this.registry],
  });

  readonly eventsDuplicate = new Counter({
    name: 'hookprompt_events_duplicate_total',
    help: 'Webhook requests answered as duplicates of an earlier event (nothing stored).',
    registers: [this.registry],
  });

  readonly eventsRejected = new Counter({
    name: 'hookprompt_events_rejected_total',
    help: 'Webhook requests refused, by problem code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly rateLimitFailOpen = new Counter({
    name: 'hookprompt_rate_limit_fail_open_total',
    help: 'Requests let through without counting them, because Redis did not answer within 500 ms, by limit.',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly replies = new Counter({
    name: 'hookprompt_replies_total',
    help: 'Events the worker finished (replied, skipped, failed) or put back for a retry (retried).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Each lookup of a channel with the reply cache on: served from it (`hit`) or asked (`miss`). */
  readonly replyCache = new Counter({
    name: 'hookprompt_reply_cache_total',
    help: 'Events of channels with the reply cache on, by outcome: replied from the cache (hit) or asked (miss).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly aiLatency = new Histogram({
    name: 'hookprompt_ai_request_duration_seconds',
    help: 'Duration of AI calls, by result (ok or error).',
    labelNames: ['result'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120],
    registers: [this.registry],
  });

  readonly aiCost = new Counter({
    name: 'hookprompt_ai_cost_usd_total',
    help: 'What AI calls cost in USD (calls of known price only), by provider and model.',
    labelNames: ['provider', 'model'] as const,
    registers: [this.registry],
  });

  /**
   * Each attempt to deliver a message, by the kind of destination (`webhook`: reply delivery) and
   * what came of it: `delivered`, `retried` (tried again later), `failed` (given up), `gone` (a
   * 410 turned the channel's delivery off).
   */
  readonly deliveries = new Counter({
    name: 'hookprompt_deliveries_total',
    help: 'Delivery attempts, by destination kind and outcome (delivered, retried, failed, gone).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly deliveryDuration = new Histogram({
    name: 'hookprompt_delivery_duration_seconds',
    help: 'Duration of delivery attempts, from the connection to the end of the answer, by destination kind.',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60],
    registers: [this.registry],
  });

  /**
   * Each AI call, fallbacks included, by the provider's name in its workspace (`default` for the
   * server's own), the model asked for (see ModelLabel), and whether it gave a usable reply
   * (`ok`, `error`).
   */
  readonly aiCalls = new Counter({
    name: 'hookprompt_ai_calls_total',
    help: 'AI calls made, by provider name, model and outcome (ok or error).',
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers: [this.registry],
  });

  /**
   * Each tool call the model asked for, by the name it was offered under (`other` for a name
   * that was not offered: a model's inventions are not labels) and its status (`ok`, `error`,
   * `refused`, `denied`, `skipped`).
   */
  readonly toolCalls = new Counter({
    name: 'hookprompt_tool_calls_total',
    help: 'Tool calls asked for by models, by tool and status.',
    labelNames: ['tool', 'status'] as const,
    registers: [this.registry],
  });

  /**
   * A webhook's 200 waits for its batch's write: one statement that ends with the commit's disk
   * flush. Slow writes here, with nothing slow in the process, are the database's or its disk's.
   */
  readonly eventBatchWrites = new Histogram({
    name: 'hookprompt_event_batch_write_seconds',
    help: 'Time to store one batch of webhook events, commit included (failed writes too).',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'hookprompt_queue_depth',
    help: 'Events waiting for a reply (pending) or being answered (processing).',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly oldestPendingAge = new Gauge({
    name: 'hookprompt_queue_oldest_pending_age_seconds',
    help: 'Age of the oldest event still waiting for a reply; 0 when none waits.',
    registers: [this.registry],
  });

  readonly logLinesDropped = new Counter({
    name: 'hookprompt_log_lines_dropped_total',
    help: 'Log lines dropped because standard output was not read fast enough, or not at all.',
    registers: [this.registry],
    // Standard output is one per process, so its count is read at scrape time, not kept here.
    collect() {
      this.reset();
      this.inc(logToStandardOutput().droppedLines);
    },
  });

  constructor(
    /** How calls' models are labelled (the prices know the names); every model is `other` here. */
    readonly modelLabel: ModelLabel = () => Promise.resolve(OTHER_MODEL),
  ) {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Sets the queue gauges; called just before each scrape with figures read from the database. */
  showQueue(stats: QueueStats): void {
    this.queueDepth.set({ status: 'pending' }, stats.pending);
    this.queueDepth.set({ status: 'processing' }, stats.processing);
    this.oldestPendingAge.set(stats.oldestPendingAgeSeconds);
  }

  /** Drops the queue gauges, so a scrape without the database shows no stale numbers. */
  forgetQueue(): void {
    this.queueDepth.reset();
    this.oldestPendingAge.reset();
  }
}

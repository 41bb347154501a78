import type { Histogram } from 'prom-client';
import type { Config } from '../platform/config.js';
import type { Database } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { GroupCommit } from '../db/group-commit.js';
import { hashWebhookToken } from '../channels/webhook-token.js';
import { ChannelCache } from './channel-cache.js';
import { BodyTurns } from './body-turns.js';
import type { DecodeBudget } from './decode-budget.js';
import { HOOK_DEADLINES } from './hook-deadlines.js';
import * as repo from './ingest-repo.js';
import { Intake, type IngestOutcome, type IntakeParts } from './intake.js';
import { receive } from './intake-pipeline.js';
import type { HookRateLimits } from './rate-limits.js';
import { EventBatchStore, type IncomingEvent, type StoredEvent } from './store-event-batch.js';

export type { ReceivingChannel } from './ingest-repo.js';
export type { IngestOutcome } from './intake.js';

/** The database notification sent when a channel changes (see migrations/0004). */
export const CHANNEL_CHANGED = 'hookprompt_channel_changed';

/** The payloads one batch of events carries at most, in characters (one event is sent alone). */
const MAX_BATCH_PAYLOAD_CHARS = 2 * 1024 * 1024;

/**
 * Receives webhook events: what the pipeline's steps use (the channel cache, the rate limits,
 * the decoders' budget) and its one writer, the group commit of store-event-batch.ts.
 */
export class IngestService implements IntakeParts {
  private readonly batches: GroupCommit<IncomingEvent, StoredEvent>;
  private readonly cache = new ChannelCache();
  private stopListening: (() => Promise<void>) | undefined;
  readonly bodyLimitBytes: number;
  readonly bodyTimeoutMs: number;
  readonly syncWaitMaxS: number;
  readonly bodyTurns = new BodyTurns();

  constructor(
    private readonly db: Database,
    /** Opens the channels' verification secrets, once per lookup (the cache keeps them open). */
    private readonly secrets: SecretBox,
    config: Pick<Config, 'bodyLimitBytes' | 'bodyTimeoutMs' | 'syncWaitMaxS'>,
    /** Times each batch's write (the metrics' eventBatchWrites). */
    batchWrites: Pick<Histogram, 'startTimer'>,
    readonly decodeBudget: DecodeBudget,
    /** The rate limits, made once the context starts (they may count in Redis). */
    private readonly rateLimits: () => HookRateLimits,
  ) {
    this.bodyLimitBytes = config.bodyLimitBytes;
    this.bodyTimeoutMs = config.bodyTimeoutMs;
    this.syncWaitMaxS = config.syncWaitMaxS;
    const store = new EventBatchStore(db);
    const write = async (events: IncomingEvent[], deadline: number) => {
      const written = batchWrites.startTimer();
      try {
        return await store.store(events, deadline);
      } finally {
        written();
      }
    };
    this.batches = new GroupCommit(write, {
      maxBatchSize: 200,
      // One batch at a time: batches of one workspace queue on its quota row anyway, and each
      // statement has a fixed cost in the database, so what arrives meanwhile is better sent as
      // one larger batch (bench/HISTORY.md).
      maxConcurrentWrites: 1,
      // A batch's parameters are built and sent in one turn of the event loop, in time that
      // grows with its payloads: large payloads make smaller batches, so that turn stays short.
      maxBatchWeight: MAX_BATCH_PAYLOAD_CHARS,
      weigh: (event) => event.payload.length,
    });
  }

  get limits(): HookRateLimits {
    return this.rateLimits();
  }

  /** Keeps the channel cache in step with changes made by any process. */
  async start(): Promise<void> {
    this.stopListening = await this.db.listen(CHANNEL_CHANGED, (tokenHash) =>
      this.cache.forget(tokenHash),
    );
  }

  async stop(): Promise<void> {
    const stopListening = this.stopListening;
    this.stopListening = undefined;
    await stopListening?.();
  }

  /** Runs a webhook through the pipeline (intake-pipeline.ts). */
  receive(intake: Intake): Promise<IngestOutcome> {
    return receive(intake, this);
  }

  /** The panel's "send test event": the pipeline from `disabled` on, as a sender's would go. */
  receiveTestEvent(channel: repo.ReceivingChannel, body: Buffer): Promise<IngestOutcome> {
    return receive(Intake.testEvent(channel, body, this.bodyLimitBytes), this);
  }

  store(event: IncomingEvent, deadline: number): Promise<StoredEvent> {
    return this.batches.submit(event, deadline);
  }

  /** Drops a changed channel from the cache now, without waiting for its notification. */
  forgetChannel(tokenHash: string): void {
    this.cache.forget(tokenHash);
  }

  /** @param deadline when to stop asking the database (a 503 for the sender) */
  async findChannel(
    token: string,
    deadline = Date.now() + HOOK_DEADLINES.lookupMs,
  ): Promise<repo.ReceivingChannel | undefined> {
    const tokenHash = hashWebhookToken(token);
    return this.cache.get(tokenHash) ?? this.lookUp(tokenHash, deadline);
  }

  findChannelAgain(
    tokenHash: string,
    deadline: number,
  ): Promise<repo.ReceivingChannel | undefined> {
    this.cache.forget(tokenHash);
    return this.lookUp(tokenHash, deadline);
  }

  /** The receiving side of a channel the caller already knows by id (the panel). */
  findChannelById(channelId: string): Promise<repo.ReceivingChannel | undefined> {
    return repo.findReceivingChannel(this.db, this.secrets, { id: channelId });
  }

  private async lookUp(
    tokenHash: string,
    deadline: number,
  ): Promise<repo.ReceivingChannel | undefined> {
    const channel = await repo.findReceivingChannel(
      this.db,
      this.secrets,
      { tokenHash },
      { deadline },
    );
    if (channel) this.cache.set(channel);
    return channel;
  }
}

import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import type { EventRow } from '../events/event-row.js';
import * as repo from './events-feed-repo.js';
import type { EventConditions } from './events-where.js';
import { matchesPayload } from './payload-filter.js';

/** Where migration 0010 announces stored events and status changes (the payload: workspace ids). */
export const EVENT_CHANGES_CHANNEL = 'hookprompt_event_changes';

export interface FeedOptions {
  /** Every stream is read again this often, in case a notification was lost. */
  pollMs?: number;
  /**
   * Change numbers are drawn when a statement runs but seen when it commits, so a number can
   * become visible after a higher one was sent. Each read looks this far back and sends what
   * it had not sent yet.
   */
  lookbackMs?: number;
}

interface Subscriber {
  conditions: EventConditions;
  send: (row: EventRow) => void | Promise<void>;
  /** Ends the stream (the process is stopping). */
  end: () => void;
  /** The highest change number sent, or the start. */
  cursor: bigint;
  /** (when, cursor) after each read: the cursor of lookbackMs ago is where a read starts. */
  checkpoints: { at: number; cursor: bigint }[];
  /** Change numbers above the read start that were already sent. */
  sent: Set<bigint>;
  reading: boolean;
  again: boolean;
  closed: boolean;
}

const PAGE = 200;
/** Events are loaded a few at a time, this many bytes of text at most (always at least one). */
const LOAD_BYTES = 8 * 1024 * 1024;

/**
 * The live tail of Brain Logs, shared by every stream of this process: one LISTEN on the
 * database (so changes made by any instance arrive), and for each stream a read of the events
 * of its filter whose change number is past the last it sent.
 */
export class EventsFeed {
  private readonly subscribers = new Set<Subscriber>();
  private listening: Promise<() => Promise<void>> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly pollMs: number;
  private readonly lookbackMs: number;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    options: FeedOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 5_000;
    this.lookbackMs = options.lookbackMs ?? 10_000;
  }

  /**
   * Sends `send` every event of the filter stored or changed after change number `after`
   * (undefined: after now); `end` is called if the process stops first. Resolves to the
   * function that ends the subscription.
   */
  async subscribe(
    conditions: EventConditions,
    after: string | undefined,
    send: (row: EventRow) => void | Promise<void>,
    end: () => void = () => undefined,
  ): Promise<() => void> {
    await this.listen();
    const start = BigInt(after ?? (await repo.lastChangeSeq(this.db, conditions.workspaceId)));
    const subscriber: Subscriber = {
      conditions,
      send,
      end,
      cursor: start,
      checkpoints: [{ at: 0, cursor: start }],
      sent: new Set(),
      reading: false,
      again: false,
      closed: false,
    };
    this.subscribers.add(subscriber);
    this.timer ??= setInterval(() => this.readAll('*'), this.pollMs).unref();
    // Resuming (Last-Event-ID): what changed while the client was away comes first.
    if (after !== undefined) void this.read(subscriber);
    return () => {
      subscriber.closed = true;
      this.subscribers.delete(subscriber);
      if (this.subscribers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Ends every stream: they never finish on their own, and a stopping server waits for them. */
  endStreams(): void {
    for (const subscriber of [...this.subscribers]) {
      subscriber.closed = true;
      this.subscribers.delete(subscriber);
      subscriber.end();
    }
  }

  async stop(): Promise<void> {
    this.endStreams();
    clearInterval(this.timer);
    this.timer = undefined;
    const listening = this.listening;
    this.listening = undefined;
    if (listening) await (await listening)();
  }

  private listen(): Promise<unknown> {
    this.listening ??= this.db.listen(EVENT_CHANGES_CHANNEL, (payload) => this.readAll(payload));
    return this.listening;
  }

  /** `workspaces`: ids separated by commas, `*` for all, or '' (a reconnect: anything may have changed). */
  private readAll(workspaces: string): void {
    const ids = workspaces === '' || workspaces === '*' ? undefined : workspaces.split(',');
    for (const subscriber of this.subscribers) {
      if (!ids || ids.includes(subscriber.conditions.workspaceId)) void this.read(subscriber);
    }
  }

  /** Reads and sends what changed; a read asked for while one runs runs right after it. */
  private async read(subscriber: Subscriber): Promise<void> {
    if (subscriber.reading) {
      subscriber.again = true;
      return;
    }
    subscriber.reading = true;
    try {
      do {
        subscriber.again = false;
        await this.readOnce(subscriber);
      } while (subscriber.again && !subscriber.closed);
    } catch (error) {
      this.log.warn({ err: error }, 'live tail: reading changes failed; retrying on the next poll');
    } finally {
      subscriber.reading = false;
    }
  }

  private async readOnce(subscriber: Subscriber): Promise<void> {
    const now = Date.now();
    const { checkpoints } = subscriber;
    // The newest checkpoint at least lookbackMs old is where this read starts.
    while (
      checkpoints.length > 1 &&
      (checkpoints[1] as { at: number }).at <= now - this.lookbackMs
    ) {
      checkpoints.shift();
    }
    const from = (checkpoints[0] as { cursor: bigint }).cursor;
    for (const seq of subscriber.sent) if (seq <= from) subscriber.sent.delete(seq);
    let after = from;
    for (;;) {
      const changes = await repo.listChanges(
        this.db,
        subscriber.conditions,
        after.toString(),
        PAGE,
      );
      const last = changes[changes.length - 1];
      if (last) after = BigInt(last.change_seq);
      // What was sent already is seen again by the look back, but not loaded again.
      const unsent = changes.filter((change) => !subscriber.sent.has(BigInt(change.change_seq)));
      for (const group of groupsOfBytes(unsent, LOAD_BYTES)) {
        if (subscriber.closed) return;
        await this.sendChanges(subscriber, group);
      }
      if (changes.length < PAGE) break;
    }
    checkpoints.push({ at: now, cursor: subscriber.cursor });
  }

  /** Loads the events of these changes and sends each the filter still matches. */
  private async sendChanges(subscriber: Subscriber, changes: repo.EventChange[]): Promise<void> {
    const ids = changes.map((change) => change.id);
    const rows = await repo.changedEvents(this.db, subscriber.conditions, ids);
    for (const change of changes) this.markSent(subscriber, BigInt(change.change_seq));
    for (const row of rows) {
      if (subscriber.closed) return;
      // It may have changed again since it was listed: it goes out as it is now, once.
      this.markSent(subscriber, BigInt(row.change_seq));
      if (matchesPayload(row.payload, subscriber.conditions.payload ?? [])) {
        await subscriber.send(row);
      }
    }
  }

  private markSent(subscriber: Subscriber, seq: bigint): void {
    subscriber.sent.add(seq);
    if (seq > subscriber.cursor) subscriber.cursor = seq;
  }
}

/** Consecutive groups of at most `limit` bytes each (a larger item makes a group of its own). */
function groupsOfBytes<T extends { bytes: number }>(items: T[], limit: number): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (group.length > 0 && bytes + item.bytes > limit) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(item);
    bytes += Number(item.bytes);
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

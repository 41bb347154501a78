import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { findAnswers, type AnswerRow } from './event-answers-repo.js';
import { FINISHED_STATUSES } from './event-states.js';

/** The NOTIFY channel of migrations/0008: an event finished; the payload is its id. */
export const EVENT_FINISHED = 'hookprompt_event_finished';

interface Waiter {
  eventId: string;
  /** Date.now() after which the waiter is answered without the event. */
  deadline: number;
  resolve: (row: AnswerRow | undefined) => void;
}

const isFinished = (row: AnswerRow) =>
  (FINISHED_STATUSES as readonly string[]).includes(row.status);

/**
 * Holds senders' answers until their events finish, for every request of this process at once.
 * Whatever the number of waiting requests, it costs one LISTEN connection (shared), one query
 * per batch of notifications, one deadline timer and one fallback poll: a waiting request is
 * an entry in a map, not a connection, a timer or a polling loop of its own.
 *
 * Released by the event's completion in any process sharing the database (the trigger of
 * migrations/0008 sends its id at commit); the poll covers notifications lost while the LISTEN
 * connection was being re-opened.
 */
export class EventWaits {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly toCheck = new Set<string>();
  private checking = false;
  private flushScheduled = false;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;
  private pollTimer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private closed = false;
  private count = 0;

  constructor(
    private readonly db: Database,
    private readonly pollIntervalMs: number,
    private readonly log: Logger,
  ) {}

  /** Requests being held right now. */
  get size(): number {
    return this.count;
  }

  async start(): Promise<void> {
    this.closed = false;
    try {
      // An empty payload means the connection was (re)opened and some ids may have been missed.
      this.unlisten = await this.db.listen(EVENT_FINISHED, (eventId) =>
        eventId ? this.check([eventId]) : this.check([...this.waiters.keys()]),
      );
    } catch (error) {
      this.log.warn({ err: error }, 'cannot listen for finished events; held answers poll');
    }
  }

  /**
   * Resolves with the event once it is finished, or with undefined when `ms` pass first or
   * waiting is cut short (shutdown). The event is looked at once right away: it may have
   * finished before this call.
   */
  wait(eventId: string, ms: number): Promise<AnswerRow | undefined> {
    if (this.closed || ms <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = { eventId, deadline: Date.now() + ms, resolve };
      let waiting = this.waiters.get(eventId);
      if (!waiting) this.waiters.set(eventId, (waiting = new Set()));
      waiting.add(waiter);
      this.count++;
      this.armDeadline(waiter.deadline);
      this.startPolling();
      this.check([eventId]);
    });
  }

  /** Answers every held request at once (without its event) and holds no new ones: shutdown. */
  cutShort(): void {
    this.closed = true;
    for (const waiting of this.waiters.values())
      for (const waiter of waiting) waiter.resolve(undefined);
    this.waiters.clear();
    this.toCheck.clear();
    this.count = 0;
    clearTimeout(this.deadlineTimer);
    this.armedFor = Infinity;
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  async stop(): Promise<void> {
    this.cutShort();
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    await unlisten?.().catch(() => undefined);
  }

  private check(eventIds: Iterable<string>): void {
    for (const id of eventIds) if (this.waiters.has(id)) this.toCheck.add(id);
    if (this.toCheck.size === 0 || this.flushScheduled || this.checking) return;
    this.flushScheduled = true;
    // Ids gathered during this turn of the event loop are read with one statement.
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const ids = [...this.toCheck];
    this.toCheck.clear();
    if (ids.length === 0) return;
    this.checking = true;
    try {
      for (const row of await findAnswers(this.db, ids)) if (isFinished(row)) this.release(row);
    } catch (error) {
      this.log.warn({ err: error }, 'reading finished events failed; the next poll tries again');
    } finally {
      this.checking = false;
      // What arrived while the statement ran forms the next batch.
      this.check([]);
    }
  }

  private release(row: AnswerRow): void {
    const waiting = this.waiters.get(row.id);
    if (!waiting) return;
    this.waiters.delete(row.id);
    this.count -= waiting.size;
    for (const waiter of waiting) waiter.resolve(row);
  }

  /** One timer for all deadlines: armed for the earliest, re-armed for the next when it fires. */
  private armDeadline(at: number): void {
    if (at >= this.armedFor) return;
    clearTimeout(this.deadlineTimer);
    this.armedFor = at;
    this.deadlineTimer = setTimeout(() => this.expire(), Math.max(0, at - Date.now()));
    this.deadlineTimer.unref();
  }

  private expire(): void {
    this.armedFor = Infinity;
    this.deadlineTimer = undefined;
    // Timers may fire a millisecond early (rounding); such a waiter is due all the same.
    const now = Date.now() + 1;
    let next = Infinity;
    for (const [eventId, waiting] of this.waiters) {
      for (const waiter of waiting) {
        if (waiter.deadline > now) {
          next = Math.min(next, waiter.deadline);
          continue;
        }
        waiting.delete(waiter);
        this.count--;
        waiter.resolve(undefined);
      }
      if (waiting.size === 0) this.waiters.delete(eventId);
    }
    if (next < Infinity) this.armDeadline(next);
  }

  private startPolling(): void {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => {
      if (this.waiters.size === 0) {
        clearInterval(this.pollTimer);
        this.pollTimer = undefined;
        return;
      }
      this.check(this.waiters.keys());
    }, this.pollIntervalMs);
    this.pollTimer.unref();
  }
}

import { DatabaseTimeoutError } from './database.js';

interface Waiting<Item, Result> {
  item: Item;
  deadline: number;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers concurrent writes into one database transaction ("group commit").
 *
 * Every accepted webhook must be committed before its sender gets a 200, and each commit waits
 * for a disk flush and for the workspace's quota row. Writing events one transaction each caps
 * throughput at one flush per request; writing what arrived meanwhile in one transaction shares
 * the flush and the quota-row lock among the whole batch.
 *
 * No timer adds latency: a batch starts at the end of the current event-loop turn if a write
 * slot is free. While all slots are busy, new items wait and form the next batch, so batches
 * grow by themselves exactly when the database is the bottleneck.
 *
 * Every item has a deadline. One still waiting for a slot when it passes is refused then (it was
 * never sent); a batch is written with the earliest deadline of its items, and `writeBatch`
 * must settle by that deadline (plus a moment) and never commit after it. One timer watches the
 * waiting items' deadlines, not one per item: under load every item waits for a slot, and a
 * timer set and cleared per webhook cost about 1 µs of the receiver's ~70 µs of CPU.
 */
export class GroupCommit<Item, Result> {
  private waiting: Waiting<Item, Result>[] = [];
  private writesInFlight = 0;
  private scheduled = false;
  /** Set while items wait, for the earliest of their deadlines (or an earlier moment). */
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineTimerAt = Number.POSITIVE_INFINITY;

  constructor(
    /** Writes a batch in one transaction that commits by `deadline` or not at all; one result per item, in order. */
    private readonly writeBatch: (items: Item[], deadline: number) => Promise<Result[]>,
    private readonly options: {
      maxBatchSize: number;
      maxConcurrentWrites: number;
      /**
       * What a batch may weigh at most, by `weigh`: a batch is prepared and sent in one turn of
       * the event loop, so its size bounds how long that turn holds the loop. An item heavier
       * than the bound is sent alone.
       */
      maxBatchWeight?: number;
      weigh?: (item: Item) => number;
    },
  ) {}

  submit(item: Item, deadline: number): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, deadline, resolve, reject });
      // An item due before the timer set for those already waiting must not wait for it; without
      // a timer, startWrites sets one if the item still waits once this turn's writes are sent.
      if (this.deadlineTimer !== undefined && deadline < this.deadlineTimerAt)
        this.setDeadlineTimer(deadline);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.startWrites();
        });
      }
    });
  }

  private startWrites(): void {
    while (this.waiting.length > 0 && this.writesInFlight < this.options.maxConcurrentWrites) {
      const batch = this.waiting.splice(0, this.batchLength());
      let deadline = Number.POSITIVE_INFINITY;
      for (const entry of batch) deadline = Math.min(deadline, entry.deadline);
      this.writesInFlight++;
      this.writeBatch(
        batch.map((entry) => entry.item),
        deadline,
      )
        .then(
          (results) => batch.forEach((entry, i) => entry.resolve(results[i] as Result)),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.writesInFlight--;
          this.startWrites();
        });
    }
    this.watchDeadlines();
  }

  /** How many of the waiting items the next batch takes: at least one. */
  private batchLength(): number {
    const { maxBatchSize, maxBatchWeight, weigh } = this.options;
    const most = Math.min(maxBatchSize, this.waiting.length);
    if (maxBatchWeight === undefined || weigh === undefined) return most;
    let weight = 0;
    for (let i = 0; i < most; i++) {
      weight += weigh((this.waiting[i] as Waiting<Item, Result>).item);
      if (weight > maxBatchWeight) return Math.max(1, i);
    }
    return most;
  }

  /** Keeps the one deadline timer set while items wait, and only then. */
  private watchDeadlines(): void {
    if (this.waiting.length === 0) {
      clearTimeout(this.deadlineTimer);
      this.deadlineTimer = undefined;
      this.deadlineTimerAt = Number.POSITIVE_INFINITY;
    } else if (this.deadlineTimer === undefined) {
      let earliest = Number.POSITIVE_INFINITY;
      for (const entry of this.waiting) earliest = Math.min(earliest, entry.deadline);
      this.setDeadlineTimer(earliest);
    }
  }

  private setDeadlineTimer(at: number): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimerAt = at;
    this.deadlineTimer = setTimeout(
      () => {
        this.deadlineTimer = undefined;
        this.deadlineTimerAt = Number.POSITIVE_INFINITY;
        this.refuseLate();
      },
      Math.max(0, at - Date.now()),
    );
  }

  /** Refuses the waiting items whose deadline has passed: they were never sent. */
  private refuseLate(): void {
    const now = Date.now();
    const late = this.waiting.filter((entry) => entry.deadline <= now);
    this.waiting = this.waiting.filter((entry) => entry.deadline > now);
    for (const entry of late)
      entry.reject(new DatabaseTimeoutError('no database write slot became free in time'));
    this.watchDeadlines();
  }
}

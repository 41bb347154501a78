import { DatabaseTimeoutError } from './database.js';

interface Waiting<Item, Result> {
  item: Item;
  deadline: number;
  timer: NodeJS.Timeout;
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
 * must settle by that deadline (plus a moment) and never commit after it.
 */
export class GroupCommit<Item, Result> {
  private waiting: Waiting<Item, Result>[] = [];
  private writesInFlight = 0;
  private scheduled = false;

  constructor(
    /** Writes a batch in one transaction that commits by `deadline` or not at all; one result per item, in order. */
    private readonly writeBatch: (items: Item[], deadline: number) => Promise<Result[]>,
    private readonly options: { maxBatchSize: number; maxConcurrentWrites: number },
  ) {}

  submit(item: Item, deadline: number): Promise<Result> {
    return new Promise((resolve, reject) => {
      const entry: Waiting<Item, Result> = {
        item,
        deadline,
        resolve,
        reject,
        timer: setTimeout(
          () => {
            const index = this.waiting.indexOf(entry);
            if (index === -1) return;
            this.waiting.splice(index, 1);
            reject(new DatabaseTimeoutError('no database write slot became free in time'));
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      this.waiting.push(entry);
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
      const batch = this.waiting.splice(0, this.options.maxBatchSize);
      let deadline = Number.POSITIVE_INFINITY;
      for (const entry of batch) {
        clearTimeout(entry.timer);
        deadline = Math.min(deadline, entry.deadline);
      }
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
  }
}

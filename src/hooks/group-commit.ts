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
 */
export class GroupCommit<Item, Result> {
  private waiting: {
    item: Item;
    resolve: (result: Result) => void;
    reject: (error: unknown) => void;
  }[] = [];
  private writesInFlight = 0;
  private scheduled = false;

  constructor(
    /** Writes a batch in one transaction; returns one result per item, in order. */
    private readonly writeBatch: (items: Item[]) => Promise<Result[]>,
    private readonly options: { maxBatchSize: number; maxConcurrentWrites: number },
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
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
      this.writesInFlight++;
      this.writeBatch(batch.map((entry) => entry.item))
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

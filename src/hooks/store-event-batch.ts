import type { Queryable } from '../db/database.js';
import { STORE_EVENT_BATCH } from './batch-sql/store-event-batch-sql.js';
import type { KeyCheck } from './batch-sql/verdict-duplicate.js';
import {
  batchParameters,
  PARAMETER_NAMES,
  type IncomingEvent,
} from './store-event-batch-parameters.js';
import { storedEvent, type ResultRow, type StoredEvent } from './store-event-batch-rows.js';

export type { KeyCheck } from './batch-sql/verdict-duplicate.js';
export type { IncomingEvent } from './store-event-batch-parameters.js';
export type { FirstEvent, QuotaState, StoredEvent } from './store-event-batch-rows.js';

/**
 * Stores a batch in one statement, one round trip with no BEGIN or COMMIT to wait for; results
 * in the order of `events`. A key another transaction has just stored (a race between
 * instances), or with `on-insert` any key an event holds, fails the whole statement, and nothing
 * of it is stored (see isKeyTaken). Inside a transaction of the caller's it names that
 * transaction's deadline.
 */
export async function storeEventBatch(
  db: Queryable,
  events: IncomingEvent[],
  deadline: number,
  keys: KeyCheck = 'looked-up',
): Promise<StoredEvent[]> {
  const parameters = batchParameters(events, deadline);
  const { rows } = await db.query<ResultRow>(
    STORE_EVENT_BATCH[keys],
    PARAMETER_NAMES.map((name) => parameters[name]),
    // Prepared once per connection: planning it costs more than running it.
    { name: `store-event-batch-${keys}`, deadline, commitsByDeadline: true },
  );
  return rows.map(storedEvent);
}

/**
 * Stores the receiver's batches. Keys are found taken on insert while none was lately: a batch
 * that meets one fails and is sent again with its keys looked up, as are the batches of the next
 * LOOK_UP_AFTER_TAKEN_MS, so a sender that repeats its requests costs one failed statement now
 * and then. A batch that loses a race for a key to another instance is sent again too, and finds
 * the key's event. Not for a batch inside a transaction of the caller's: a failed statement ends it.
 */
export class EventBatchStore {
  private lastTakenKeyAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly db: Queryable) {}

  async store(events: IncomingEvent[], deadline: number): Promise<StoredEvent[]> {
    for (;;) {
      const recently = Date.now() - this.lastTakenKeyAt < LOOK_UP_AFTER_TAKEN_MS;
      try {
        return await storeEventBatch(
          this.db,
          events,
          deadline,
          recently ? 'looked-up' : 'on-insert',
        );
      } catch (error) {
        if (!isKeyTaken(error)) throw error;
        this.lastTakenKeyAt = Date.now();
      }
    }
  }
}

const LOOK_UP_AFTER_TAKEN_MS = 60_000;

/** The error of a key claimed by another transaction meanwhile (SQLSTATE 23505 on its index). */
export function isKeyTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'events_dedup_key_idx';
}

import type { Queryable } from '../db/database.js';
import type { EventCursor } from './events-cursor.js';
import type { EventRow } from '../events/event-row.js';
import * as repo from './events-list-repo.js';
import type { EventConditions } from './events-where.js';
import { matchesPayload } from './payload-filter.js';

/**
 * Every event of a filter, newest first, read in batches from the listing indexes: memory stays
 * one batch whatever the number of events, and no transaction is held between batches. The
 * payload conditions are decided here, by the template engine, on the candidates the database
 * returns (see events-where.ts).
 */
export async function* scanEvents(
  db: Queryable,
  conditions: EventConditions,
  options: { after?: EventCursor; batchSize: number },
): AsyncGenerator<EventRow> {
  let after = options.after;
  for (;;) {
    const rows = await repo.listEvents(db, { ...conditions, after, limit: options.batchSize });
    for (const row of rows) {
      if (matchesPayload(row.payload, conditions.payload ?? [])) yield row;
    }
    const last = rows[rows.length - 1];
    if (rows.length < options.batchSize || !last) return;
    after = { receivedAt: last.received_at_exact, id: last.id };
  }
}

/** Matching events, counted no further than `cap`. */
export async function countMatching(
  db: Queryable,
  conditions: EventConditions,
  cap: number,
): Promise<number> {
  if (!conditions.payload?.length) return repo.countEvents(db, conditions, cap);
  let count = 0;
  for await (const _row of scanEvents(db, conditions, { batchSize: 1000 })) {
    if (++count >= cap) break;
  }
  return count;
}

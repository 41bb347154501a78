import type { Queryable } from '../db/database.js';
import { sqlStatusList, QUEUED_STATUSES } from '../events/event-states.js';
import type { QueueStats } from '../metrics/metrics.js';

/** One pass over the unfinished events only (the partial queue index), for the metrics scrape. */
export async function queueStats(db: Queryable): Promise<QueueStats> {
  const { rows } = await db.query<{ pending: string; processing: string; oldest: number | null }>(
    `select
       count(*) filter (where status = 'pending') as pending,
       count(*) filter (where status = 'processing') as processing,
       extract(epoch from now() - min(received_at) filter (where status = 'pending'))::float8 as oldest
     from events
     where status in ${sqlStatusList(QUEUED_STATUSES)}`,
  );
  const row = rows[0];
  return {
    pending: Number(row?.pending ?? 0),
    processing: Number(row?.processing ?? 0),
    oldestPendingAgeSeconds: Math.max(0, Number(row?.oldest ?? 0)),
  };
}

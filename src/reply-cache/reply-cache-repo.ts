import type { Queryable } from '../db/database.js';

/** What the cache saved a workspace over a time range. */
export interface CacheSavings {
  /** Events replied from the cache. */
  hits: number;
  /** What the replies they were served cost when the model gave them (known costs only), USD. */
  cost_usd: number;
}

/** Events of the workspace received in [from, to) that were served from the cache. */
export async function cacheSavings(
  db: Queryable,
  workspaceId: string,
  from: Date,
  to: Date,
): Promise<CacheSavings> {
  const { rows } = await db.query<{ hits: number; cost_usd: number }>(
    `select count(*)::integer as hits, coalesce(sum(source.cost_usd), 0)::float8 as cost_usd
     from events served
     left join events source on source.id = served.cached_from
     where served.workspace_id = $1 and served.cached_from is not null
       and served.received_at >= $2 and served.received_at < $3`,
    [workspaceId, from, to],
  );
  return rows[0] ?? { hits: 0, cost_usd: 0 };
}

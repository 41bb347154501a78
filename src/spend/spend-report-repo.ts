import type { Queryable } from '../db/database.js';

export interface SpendRange {
  workspaceId: string;
  /** Inclusive bound on the calls' created_at. */
  from: Date;
  /** Exclusive bound. */
  to: Date;
}

// Costs summed as exact decimals and handed over as float8; a bucket whose calls all have an
// unknown cost sums to null.
const CALLS = `count(*)::int as calls, sum(cost_usd)::float8 as cost_usd`;
const RANGE = `workspace_id = $1 and created_at >= $2 and created_at < $3`;

export interface DaySpend {
  day: string;
  calls: number;
  cost_usd: number | null;
}

export interface ModelSpend {
  provider: string;
  model: string | null;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Of the prompt tokens, those read from and written to the providers' prompt caches. */
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number | null;
}

export interface ChannelSpend {
  channel_id: string | null;
  calls: number;
  cost_usd: number | null;
}

/** Per UTC day, days without calls left out; one range of spend_workspace_created_idx. */
export async function spendByDay(db: Queryable, range: SpendRange): Promise<DaySpend[]> {
  const { rows } = await db.query<DaySpend>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, ${CALLS}
     from spend where ${RANGE} group by 1 order by 1`,
    [range.workspaceId, range.from, range.to],
  );
  return rows;
}

/** Per provider and model, dearest first. */
export async function spendByModel(db: Queryable, range: SpendRange): Promise<ModelSpend[]> {
  const { rows } = await db.query<ModelSpend>(
    `select provider, model, ${CALLS},
            coalesce(sum(prompt_tokens), 0)::float8 as prompt_tokens,
            coalesce(sum(completion_tokens), 0)::float8 as completion_tokens,
            sum(cache_read_tokens)::float8 as cache_read_tokens,
            sum(cache_write_tokens)::float8 as cache_write_tokens
     from spend where ${RANGE}
     group by provider, model
     order by sum(cost_usd) desc nulls last, count(*) desc, provider, model`,
    [range.workspaceId, range.from, range.to],
  );
  return rows;
}

/** Per channel (deleted ones included: their calls were paid), dearest first. */
export async function spendByChannel(db: Queryable, range: SpendRange): Promise<ChannelSpend[]> {
  const { rows } = await db.query<ChannelSpend>(
    `select channel_id::text, ${CALLS}
     from spend where ${RANGE}
     group by channel_id
     order by sum(cost_usd) desc nulls last, count(*) desc, channel_id`,
    [range.workspaceId, range.from, range.to],
  );
  return rows;
}

export interface SpendTotals {
  /** Every known cost of the range, summed exactly. */
  total_usd: number;
  /** The calls of the range whose cost is unknown (no price for the model, or no usage). */
  unpriced_calls: number;
}

export async function spendTotals(db: Queryable, range: SpendRange): Promise<SpendTotals> {
  const { rows } = await db.query<SpendTotals>(
    `select coalesce(sum(cost_usd), 0)::float8 as total_usd,
            count(*) filter (where cost_usd is null)::int as unpriced_calls
     from spend where ${RANGE}`,
    [range.workspaceId, range.from, range.to],
  );
  return rows[0] ?? { total_usd: 0, unpriced_calls: 0 };
}

import type { Queryable } from '../db/database.js';

/** Events and tokens of one bucket (a UTC day or a channel). */
export interface UsageTotals {
  events: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface UsageRange {
  workspaceId: string;
  /** Inclusive bound on received_at. */
  from: Date;
  /** Exclusive bound on received_at. */
  to: Date;
}

// Accepted events only (a refused request asks the AI nothing); tokens as stored per event.
// Sums of bigints come back as float8: exact far beyond any real token count, and a number.
const TOTALS = `count(*)::int as events,
  coalesce(sum((usage->>'prompt_tokens')::bigint), 0)::float8 as prompt_tokens,
  coalesce(sum((usage->>'completion_tokens')::bigint), 0)::float8 as completion_tokens,
  coalesce(sum((usage->>'total_tokens')::bigint), 0)::float8 as total_tokens`;

// Events that used a chat: refused and filtered requests used none.
const RANGE = `workspace_id = $1 and received_at >= $2 and received_at < $3
  and status not in ('rejected', 'filtered')`;

/** Per UTC day of arrival, days without events left out; one range of events_workspace_received_idx. */
export async function usageByDay(
  db: Queryable,
  range: UsageRange,
): Promise<(UsageTotals & { day: string })[]> {
  const { rows } = await db.query<UsageTotals & { day: string }>(
    `select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD') as day, ${TOTALS}
     from events where ${RANGE}
     group by 1 order by 1`,
    [range.workspaceId, range.from, range.to],
  );
  return rows;
}

/** Per channel (deleted ones included: their events were answered), most tokens first. */
export async function usageByChannel(
  db: Queryable,
  range: UsageRange,
): Promise<(UsageTotals & { channel_id: string; channel_name: string })[]> {
  const { rows } = await db.query<UsageTotals & { channel_id: string; channel_name: string }>(
    `select per_channel.*, channels.name as channel_name
     from (select channel_id, ${TOTALS} from events where ${RANGE} group by channel_id) as per_channel
     join channels on channels.id = per_channel.channel_id
     order by total_tokens desc, events desc, channel_id`,
    [range.workspaceId, range.from, range.to],
  );
  return rows;
}

import type { Queryable } from '../db/database.js';

/** Failed or refused events of one channel with one cause, over a window of time. */
export interface FailureGroup {
  channel_id: string;
  status: 'rejected' | 'failed';
  /** A refusal's code, or an AI error's text up to its first colon (`reply_invalid`). */
  cause: string;
  count: number;
  last_at: Date;
}

/**
 * Refused and failed events of a workspace (or one channel) in [from, to), grouped by channel and
 * cause, most frequent first: Brain Logs' answer to "what keeps going wrong".
 */
export async function failureGroups(
  db: Queryable,
  workspaceId: string,
  channelId: string | undefined,
  from: Date,
  to: Date,
  limit: number,
): Promise<FailureGroup[]> {
  const { rows } = await db.query<FailureGroup>(
    `select channel_id::text, status, cause, count(*)::integer as count, max(received_at) as last_at
     from (select channel_id, status, received_at,
                  left(split_part(coalesce(error, status), ':', 1), 120) as cause
           from events
           where workspace_id = $1 and ($2::bigint is null or channel_id = $2)
             and received_at >= $3 and received_at < $4
             and status in ('rejected', 'failed')) failures
     group by channel_id, status, cause
     order by count desc, last_at desc
     limit $5`,
    [workspaceId, channelId ?? null, from, to, limit],
  );
  return rows;
}

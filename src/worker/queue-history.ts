import type { HistoryTurn } from '../ai/ai-provider.js';
import type { Queryable } from '../db/database.js';

/**
 * The last `limit` replied events of a thread received before `eventId`, oldest first: the
 * exchanges sent to the AI before the event's own prompt. One read of events_thread_idx,
 * newest first from the event backwards.
 */
export async function threadHistory(
  db: Queryable,
  channelId: string,
  threadKey: string,
  eventId: string,
  limit: number,
): Promise<HistoryTurn[]> {
  const { rows } = await db.query<HistoryTurn>(
    `select prompt, reply from (
       select id, prompt, reply from events
       where channel_id = $1 and thread_key = $2 and id < $3 and status = 'replied'
         and prompt is not null and reply is not null
       order by id desc
       limit $4
     ) as recent
     order by id`,
    [channelId, threadKey, eventId, limit],
  );
  return rows;
}

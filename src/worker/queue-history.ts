import type { HistoryTurn } from '../ai/ai-provider.js';
import type { Queryable } from '../db/database.js';

/** An earlier exchange, with the placeholders its own call sent and their values (or null). */
export type ThreadTurn = HistoryTurn & { sent: Record<string, string> | null };

/** A thread's history as read for one call: what fits, and how many older turns did not. */
export interface ThreadHistory {
  turns: ThreadTurn[];
  dropped: number;
}

/**
 * The last `limit` replied events of a thread received before `eventId`, oldest first: the
 * exchanges sent to the AI before the event's own prompt. One read of events_thread_idx,
 * newest first from the event backwards. Only the newest turns whose texts fit in
 * `roomChars` characters are read (the input limit drops the oldest first), so a thread of long
 * replies is never loaded whole; the caller counts exactly (characters here are code points).
 */
export async function threadHistory(
  db: Queryable,
  channelId: string,
  threadKey: string,
  eventId: string,
  limit: number,
  roomChars: number,
): Promise<ThreadHistory> {
  const { rows } = await db.query<{
    prompt: string | null;
    reply: string | null;
    sent: Record<string, string> | null;
  }>(
    `select case when fits then prompt end as prompt, case when fits then reply end as reply,
            case when fits then redaction_values end as sent
     from (
       select id, prompt, reply, redaction_values,
              sum(char_length(prompt) + char_length(reply)) over (order by id desc) <= $5 as fits
       from (
         select id, prompt, reply, redaction_values from events
         where channel_id = $1 and thread_key = $2 and id < $3 and status = 'replied'
           and prompt is not null and reply is not null
         order by id desc
         limit $4
       ) as recent
     ) as sized
     order by id`,
    [channelId, threadKey, eventId, limit, Math.max(0, roomChars)],
  );
  const turns = rows.filter((row): row is ThreadTurn => row.prompt !== null);
  return { turns, dropped: rows.length - turns.length };
}

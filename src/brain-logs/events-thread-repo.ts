import type { Queryable } from '../db/database.js';

/** An event of a thread as the event page lists it: when, how it ended, its texts' start. */
export interface ThreadEventRow {
  id: string;
  received_at: Date;
  status: string;
  /** The reply's first characters, or null. */
  reply: string | null;
  /** The error's first characters, or null. */
  error: string | null;
}

/** Where a thread is read from, and how much of it. */
export interface ThreadQuery {
  workspaceId: string;
  channelId: string;
  threadKey: string;
  /** The event the thread is read around. */
  aroundId: string;
  /** At most this many events after it... */
  newer: number;
  /** ...and this many from it back (itself included). */
  older: number;
  /** Reply and error are cut to this many characters. */
  chars: number;
}

/**
 * The events of one thread around one event, newest first. Ordered by id, the order the worker
 * answers a thread in (queue-claim.ts), so each half is one short range of events_thread_idx
 * (channel, thread key, id) read from the event outwards: a long thread costs no more than a
 * short one. `left()` reads only the start of a long reply.
 */
export async function listThreadEvents(db: Queryable, q: ThreadQuery): Promise<ThreadEventRow[]> {
  const columns = `id, received_at, status, left(reply, $6) as reply, left(error, $6) as error`;
  const thread = `workspace_id = $1 and channel_id = $2 and thread_key = $3`;
  const { rows } = await db.query<ThreadEventRow>(
    `select * from (
       (select ${columns} from events where ${thread} and id > $4 order by id limit $5)
       union all
       (select ${columns} from events where ${thread} and id <= $4 order by id desc limit $7)
     ) as around
     order by id desc`,
    [q.workspaceId, q.channelId, q.threadKey, q.aroundId, q.newer, Math.trunc(q.chars), q.older],
  );
  return rows;
}

/** An earlier exchange of a thread: the prompt an event sent and the reply it got. */
export interface ThreadTurnRow {
  id: string;
  received_at: Date;
  prompt: string;
  reply: string;
}

/**
 * The last `limit` replied events of a thread before `beforeId`, oldest first: the turns the
 * worker sends as history before an event's own prompt (worker/queue-history.ts reads the same
 * rows). A short range of events_thread_idx read backwards from the event.
 */
export async function listThreadTurns(
  db: Queryable,
  q: { workspaceId: string; channelId: string; threadKey: string; beforeId: string; limit: number },
): Promise<ThreadTurnRow[]> {
  const { rows } = await db.query<ThreadTurnRow>(
    `select id, received_at, prompt, reply from (
       select id, received_at, prompt, reply from events
       where workspace_id = $1 and channel_id = $2 and thread_key = $3 and id < $4
         and status = $6 and prompt is not null and reply is not null
       order by id desc
       limit $5
     ) as recent
     order by id`,
    [q.workspaceId, q.channelId, q.threadKey, q.beforeId, q.limit, 'replied'],
  );
  return rows;
}

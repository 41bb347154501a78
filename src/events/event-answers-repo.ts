import type { Queryable } from '../db/database.js';
import type { EventStatus } from './event-states.js';

/** What a sender may learn of one of its events. */
export interface AnswerRow {
  id: string;
  status: EventStatus;
  reply: string | null;
  error: string | null;
}

/** The events among `ids` that exist, in any order: one statement for every waiter at once. */
export async function findAnswers(db: Queryable, ids: readonly string[]): Promise<AnswerRow[]> {
  const { rows } = await db.query<AnswerRow>(
    `select id, status, reply, error from events where id = any($1::bigint[])`,
    [ids],
  );
  return rows;
}

/** One event, only if it belongs to the channel: a token never reads another channel's events. */
export async function findChannelAnswer(
  db: Queryable,
  channelId: string,
  eventId: string,
): Promise<AnswerRow | undefined> {
  const { rows } = await db.query<AnswerRow>(
    `select id, status, reply, error from events where id = $1 and channel_id = $2`,
    [eventId, channelId],
  );
  return rows[0];
}

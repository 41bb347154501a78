import type { Queryable } from '../db/database.js';

export interface ChannelStats {
  /** Events received since midnight UTC, refused ones included. */
  eventsToday: number;
  /** Of those, the events whose template or system prompt had placeholders the payload lacked. */
  missingToday: number;
  lastEventAt: Date | null;
}

/**
 * Per-channel activity for the channel list, by channel id. Each figure is one small read of the
 * (channel_id, received_at) index, so the cost does not grow with the size of the log.
 */
export async function channelStats(
  db: Queryable,
  workspaceId: string,
): Promise<Map<string, ChannelStats>> {
  const { rows } = await db.query<{
    id: string;
    events_today: number;
    missing_today: number;
    last_event_at: Date | null;
  }>(
    `select c.id, today.events_today, today.missing_today,
       (select e.received_at from events e
        where e.channel_id = c.id
        order by e.received_at desc, e.id desc limit 1
       ) as last_event_at
     from channels c
     cross join lateral (
       select count(*)::int as events_today,
              (count(*) filter (where cardinality(e.missing) > 0))::int as missing_today
       from events e
       where e.channel_id = c.id
         and e.received_at >= date_trunc('day', now() at time zone 'utc') at time zone 'utc'
     ) as today
     where c.workspace_id = $1 and c.deleted_at is null`,
    [workspaceId],
  );
  return new Map(
    rows.map((row) => [
      row.id,
      {
        eventsToday: row.events_today,
        missingToday: row.missing_today,
        lastEventAt: row.last_event_at,
      },
    ]),
  );
}

import type { Queryable } from '../db/database.js';
import { eventsWhere, type EventConditions } from './events-where.js';

export type VolumeUnit = 'hour' | 'day';

export interface VolumeRow {
  /** The bucket's start, ISO 8601 UTC. */
  bucket: string;
  status: string;
  count: number;
}

/**
 * Events of a filter per hour or day and status, between `from` and `to`. Without payload
 * conditions the workspace index (which holds status and channel) answers it alone.
 */
export async function countByBucket(
  db: Queryable,
  conditions: EventConditions & { from: string; to: string },
  unit: VolumeUnit,
): Promise<VolumeRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = eventsWhere(conditions, param);
  // date_bin from a UTC midnight is date_trunc in UTC without a time zone lookup per event, and
  // the buckets are formatted once each, after counting: over a week of a busy workspace
  // (233,000 events) this is a quarter of the time of truncating and formatting every event.
  const { rows } = await db.query<VolumeRow>(
    `select to_char(bucket at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as bucket,
            status, count
     from (select date_bin(${param(`1 ${unit}`)}::interval, received_at,
                           timestamptz '2000-01-01 00:00:00+00') as bucket,
                  status, count(*)::integer as count
           from events
           where ${where.join(' and ')}
           group by 1, 2) counted
     order by 1, 2`,
    params,
  );
  return rows;
}

export interface ChannelHourRow {
  channel_id: string;
  /** Whole hours before the current one: 0 is this hour, 23 the oldest. */
  hours_ago: number;
  total: number;
  rejected: number;
  failed: number;
}

/** The last 24 hours of every channel of a workspace, per hour: one read of the workspace index. */
export async function channelHours(db: Queryable, workspaceId: string): Promise<ChannelHourRow[]> {
  const { rows } = await db.query<ChannelHourRow>(
    `select channel_id,
            (extract(epoch from date_trunc('hour', now()) - date_trunc('hour', received_at)) / 3600)::integer
              as hours_ago,
            count(*)::integer as total,
            count(*) filter (where status = 'rejected')::integer as rejected,
            count(*) filter (where status = 'failed')::integer as failed
     from events
     where workspace_id = $1 and received_at >= date_trunc('hour', now()) - interval '23 hours'
     group by 1, 2`,
    [workspaceId],
  );
  return rows;
}

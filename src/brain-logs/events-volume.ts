import type { Queryable } from '../db/database.js';
import { scanEvents } from './events-scan.js';
import type { EventConditions } from './events-where.js';
import {
  channelHours,
  countByBucket,
  type VolumeRow,
  type VolumeUnit,
} from './events-volume-repo.js';

/** Events per hour or day, stacked by status: the chart above Brain Logs. */
export interface Volume {
  unit: VolumeUnit;
  /** Every bucket of the range, oldest first, as ISO 8601. */
  buckets: string[];
  /** Per status, the count in each bucket (same order as `buckets`). */
  series: Record<string, number[]>;
  total: number;
  /**
   * More events match than were counted: with payload conditions, only the newest
   * VOLUME_SCAN_LIMIT matching events are (each one is read and decided by the template engine).
   */
  partial: boolean;
  /** How many matching events a partial chart counted at most. */
  scanLimit: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Payload conditions are decided event by event; a chart reads this many at most. */
export const VOLUME_SCAN_LIMIT = 50_000;

/** Counts in hours for up to three days, in days beyond. */
export async function eventVolume(
  db: Queryable,
  conditions: EventConditions,
  from: Date,
  to: Date,
): Promise<Volume> {
  const unit: VolumeUnit = to.getTime() - from.getTime() <= 3 * DAY ? 'hour' : 'day';
  const bounded = { ...conditions, from: from.toISOString(), to: to.toISOString() };
  let rows: VolumeRow[];
  let partial = false;
  if (conditions.payload?.length) {
    const counts = new Map<string, number>();
    let seen = 0;
    for await (const row of scanEvents(db, bounded, { batchSize: 1000 })) {
      // Partial only when a match is left out: exactly VOLUME_SCAN_LIMIT events are all counted.
      if (seen === VOLUME_SCAN_LIMIT) {
        partial = true;
        break;
      }
      seen++;
      const key = `${bucketOf(new Date(row.received_at), unit)}|${row.status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    rows = [...counts].map(([key, count]) => {
      const [bucket, status] = key.split('|') as [string, string];
      return { bucket, status, count };
    });
  } else {
    rows = await countByBucket(db, bounded, unit);
  }
  const buckets: string[] = [];
  const step = unit === 'hour' ? HOUR : DAY;
  for (let t = Date.parse(bucketOf(from, unit)); t < to.getTime(); t += step) {
    buckets.push(new Date(t).toISOString().replace('.000Z', 'Z'));
  }
  const index = new Map(buckets.map((bucket, i) => [bucket, i]));
  const series: Record<string, number[]> = {};
  let total = 0;
  for (const row of rows) {
    const i = index.get(row.bucket);
    if (i === undefined) continue;
    const counts = (series[row.status] ??= buckets.map(() => 0));
    counts[i] = (counts[i] ?? 0) + row.count;
    total += row.count;
  }
  return { unit, buckets, series, total, partial, scanLimit: VOLUME_SCAN_LIMIT };
}

function bucketOf(date: Date, unit: VolumeUnit): string {
  const iso = date.toISOString();
  return unit === 'hour' ? `${iso.slice(0, 13)}:00:00Z` : `${iso.slice(0, 10)}T00:00:00Z`;
}

/** A channel's last 24 hours: events per hour (oldest first), and how many were refused or failed. */
export interface ChannelDay {
  hourly: number[];
  total: number;
  rejected: number;
  failed: number;
}

export async function channelDays(
  db: Queryable,
  workspaceId: string,
): Promise<Map<string, ChannelDay>> {
  const days = new Map<string, ChannelDay>();
  for (const row of await channelHours(db, workspaceId)) {
    let day = days.get(row.channel_id);
    if (!day) {
      day = { hourly: Array.from({ length: 24 }, () => 0), total: 0, rejected: 0, failed: 0 };
      days.set(row.channel_id, day);
    }
    const slot = 23 - Math.min(23, Math.max(0, row.hours_ago));
    day.hourly[slot] = (day.hourly[slot] ?? 0) + row.total;
    day.total += row.total;
    day.rejected += row.rejected;
    day.failed += row.failed;
  }
  return days;
}

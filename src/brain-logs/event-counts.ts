import type { Queryable } from '../db/database.js';
import { filterConditions, type EventFilter } from './events-filter.js';
import { countMatching } from './events-scan.js';
import { failureGroups, type FailureGroup } from './failure-groups-repo.js';
import { channelDays, eventVolume, type ChannelDay, type Volume } from './events-volume.js';

/** How many events: a filter's total, its chart per hour or day, and each channel's last day. */
export class EventCounts {
  constructor(private readonly db: Queryable) {}

  /** How many events match the filter, counted up to `cap` (Brain Logs shows "10,000+" beyond). */
  count(workspaceId: string, filter: EventFilter, cap: number): Promise<number> {
    return countMatching(this.db, filterConditions(workspaceId, filter), cap);
  }

  /** Events per hour or day and status over [from, to) for the filter (its own from/to aside). */
  volume(workspaceId: string, filter: EventFilter, from: Date, to: Date): Promise<Volume> {
    const { from: _from, to: _to, ...rest } = filterConditions(workspaceId, filter);
    return eventVolume(this.db, rest, from, to);
  }

  /** Refused and failed events in [from, to) by channel and cause, the most frequent first. */
  failures(
    workspaceId: string,
    channelId: string | undefined,
    from: Date,
    to: Date,
  ): Promise<FailureGroup[]> {
    return failureGroups(this.db, workspaceId, channelId, from, to, 12);
  }

  /** Each channel's last 24 hours, by channel id. */
  channelDays(workspaceId: string): Promise<Map<string, ChannelDay>> {
    return channelDays(this.db, workspaceId);
  }
}

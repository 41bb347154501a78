import { isStorableTime } from '../db/sql.js';
import { invalidField } from '../platform/errors.js';
import type { EventStatus } from '../events/event-states.js';
import type { DeliveryCondition } from './delivery-filter.js';
import type { EventConditions } from './events-where.js';
import type { PayloadCondition } from './payload-filter.js';

/** The filter of Brain Logs, shared by its pages, counts, chart, export, live tail and replay. */
export interface EventFilter {
  /** A row id: the parsers of the API's query and the panel's filter see to it. */
  channelId?: string;
  /** Only the events of this thread (the rendered `thread_key`). */
  threadKey?: string;
  status?: EventStatus;
  /** Only the events answered with this version of their channel (with `channelId`). */
  version?: number;
  /** Inclusive bound on received_at. */
  from?: Date;
  /** Exclusive bound on received_at. */
  to?: Date;
  /** Case-insensitive text in the payload, prompt, reply or error. */
  q?: string;
  /** `payload.<path>=<value>` conditions, all of which must hold. */
  payload?: PayloadCondition[];
  /** The events with a message in this delivery state (to this target), or with none (panel only). */
  delivery?: DeliveryCondition;
  /** 1–500; 50 when not given. */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** The filter's `limit`, or the default, kept within 1 and MAX_PAGE_SIZE. */
export function pageLimit(filter: EventFilter): number {
  return Math.min(Math.max(Math.trunc(filter.limit ?? DEFAULT_PAGE_SIZE), 1), MAX_PAGE_SIZE);
}

/**
 * The filter as repo conditions.
 * @throws AppError 400 for times PostgreSQL cannot hold.
 */
export function filterConditions(workspaceId: string, filter: EventFilter): EventConditions {
  for (const [name, date] of [
    ['from', filter.from],
    ['to', filter.to],
  ] as const) {
    if (date && !isStorableTime(date)) {
      throw invalidField(name, 'must be a time between years 1 and 9999');
    }
  }
  return {
    workspaceId,
    channelId: filter.channelId,
    status: filter.status,
    from: filter.from?.toISOString(),
    to: filter.to?.toISOString(),
    q: filter.q,
    payload: filter.payload,
    threadKey: filter.threadKey,
    version: filter.version,
    delivery: filter.delivery,
  };
}

import type { Queryable } from '../db/database.js';
import { AppError, notFound } from '../errors.js';
import { decodeCursor, encodeCursor } from './events-cursor.js';
import * as repo from './events-repo.js';
import { ROW_ID } from '../secrets.js';
import { countMatching, scanEvents } from './events-scan.js';
import { channelDays, eventVolume, type ChannelDay, type Volume } from './events-volume.js';
import type { EventConditions } from './events-where.js';
import type { PayloadCondition } from './payload-filter.js';

import type { EventStatus } from './event-states.js';

/** An event as the API and Brain Logs show it. */
export interface EventJson {
  id: string;
  channel_id: string;
  received_at: string;
  status: EventStatus;
  /** The request body exactly as received. */
  payload: string;
  prompt: string | null;
  reply: string | null;
  error: string | null;
  attempts: number;
  completed_at: string | null;
  /** The request's headers, lower-case names, credentials shown as "[redacted]". */
  headers: Record<string, string>;
  /** The sender's address as the receiver saw it (TRUST_PROXY applied). */
  sender_ip: string | null;
  /** Later requests with this event's dedup key, answered with this event instead of stored. */
  duplicates: number;
  /** Where the reply delivery of the event stands; null when its channel had no reply URL. */
  delivery: EventDelivery | null;
  /** Earlier outcomes, oldest first, kept when the event was replayed. */
  history: unknown[];
}

/** An event's reply delivery as the API shows it (see src/deliveries/). */
export interface EventDelivery {
  status: 'pending' | 'delivered' | 'failed' | 'held';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

/** The latest delivery of each of these events that has one; passed in by the composition root. */
export type DeliveryLookup = (eventIds: string[]) => Promise<Map<string, EventDelivery>>;

export interface EventFilter {
  channelId?: string;
  status?: EventStatus;
  /** Inclusive bound on received_at. */
  from?: Date;
  /** Exclusive bound on received_at. */
  to?: Date;
  /** Case-insensitive text in the payload, prompt, reply or error. */
  q?: string;
  /** `payload.<path>=<value>` conditions, all of which must hold. */
  payload?: PayloadCondition[];
  threadKey?: string;
  /** 1–500; 50 when not given. */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

export interface EventPage {
  data: EventJson[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** The log of received events (Brain Logs), one workspace at a time; used by the API and the panel. */
export class EventsService {
  constructor(
    readonly db: Queryable,
    private readonly deliveries: DeliveryLookup = async () => new Map(),
  ) {}

  /**
   * One page, newest first. Events arriving between pages appear before the first page, never
   * inside later ones, so paging on neither skips nor repeats.
   * @throws AppError 400 `invalid_cursor` for a cursor this service did not give out.
   */
  async list(workspaceId: string, filter: EventFilter = {}): Promise<EventPage> {
    const limit = Math.min(
      Math.max(Math.trunc(filter.limit ?? DEFAULT_PAGE_SIZE), 1),
      MAX_PAGE_SIZE,
    );
    const after = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const conditions = this.conditions(workspaceId, filter);
    // One more than asked tells whether another page exists.
    const rows: repo.EventRow[] = [];
    for await (const row of scanEvents(this.db, conditions, { after, batchSize: limit + 1 })) {
      rows.push(row);
      if (rows.length > limit) break;
    }
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: await this.present(page),
      next_cursor:
        rows.length > limit && last
          ? encodeCursor({ receivedAt: last.received_at_exact, id: last.id })
          : null,
    };
  }

  /** Rows as the API shows them, with their reply deliveries (one lookup for all of them). */
  async present(rows: repo.EventRow[]): Promise<EventJson[]> {
    const deliveries = await this.deliveries(rows.map((row) => row.id));
    return rows.map((row) => toEventJson(row, deliveries.get(row.id)));
  }

  /** How many events match the filter, counted up to `cap` (Brain Logs shows "10,000+" beyond). */
  async count(workspaceId: string, filter: EventFilter, cap: number): Promise<number> {
    return countMatching(this.db, this.conditions(workspaceId, filter), cap);
  }

  /** Events per hour or day and status over [from, to) for the filter (its own from/to aside). */
  volume(workspaceId: string, filter: EventFilter, from: Date, to: Date): Promise<Volume> {
    const { from: _from, to: _to, ...rest } = this.conditions(workspaceId, filter);
    return eventVolume(this.db, rest, from, to);
  }

  /** Each channel's last 24 hours, by channel id. */
  channelDays(workspaceId: string): Promise<Map<string, ChannelDay>> {
    return channelDays(this.db, workspaceId);
  }

  /**
   * The filter as repo conditions.
   * @throws AppError 400 for times PostgreSQL cannot hold.
   */
  conditions(workspaceId: string, filter: EventFilter): EventConditions {
    for (const [name, date] of [
      ['from', filter.from],
      ['to', filter.to],
    ] as const) {
      if (date && !isStorableTime(date)) {
        throw new AppError(
          400,
          'validation_failed',
          'Invalid request',
          `${name}: must be a time between years 1 and 9999`,
        );
      }
    }
    return {
      workspaceId,
      // A channel id that cannot exist matches nothing, like an unknown one (ids start at 1).
      channelId:
        filter.channelId !== undefined && !ROW_ID.test(filter.channelId) ? '0' : filter.channelId,
      status: filter.status,
      from: filter.from?.toISOString(),
      to: filter.to?.toISOString(),
      q: filter.q,
      payload: filter.payload,
      threadKey: filter.threadKey,
    };
  }

  /** @throws AppError 404 when the event does not exist in this workspace. */
  async get(workspaceId: string, id: string): Promise<EventJson> {
    const row = ROW_ID.test(id) ? await repo.findEvent(this.db, workspaceId, id) : undefined;
    if (!row) throw notFound('This event');
    return toEventJson(row, (await this.deliveries([row.id])).get(row.id));
  }

  /**
   * Events by id as the API shows them, two statements for any number: for messages about
   * events (reply delivery), whose ids come from the service's own records.
   */
  async getMany(ids: string[]): Promise<Map<string, EventJson>> {
    if (ids.length === 0) return new Map();
    const [rows, deliveries] = await Promise.all([
      repo.findEventsByIds(this.db, ids),
      this.deliveries(ids),
    ]);
    return new Map(rows.map((row) => [row.id, toEventJson(row, deliveries.get(row.id))]));
  }
}

/** What PostgreSQL timestamptz and an ISO 8601 string can both hold. */
export function isStorableTime(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
}

export function toEventJson(row: repo.EventRow, delivery?: EventDelivery): EventJson {
  return {
    id: row.id,
    channel_id: row.channel_id,
    received_at: new Date(row.received_at).toISOString(),
    status: row.status as EventStatus,
    payload: row.payload,
    prompt: row.prompt,
    reply: row.reply,
    error: row.error,
    attempts: row.attempts,
    completed_at: row.completed_at ? new Date(row.completed_at).toISOString() : null,
    headers: row.headers ?? {},
    sender_ip: row.sender_ip,
    duplicates: row.duplicates,
    delivery: delivery ?? null,
    history: row.history,
  };
}

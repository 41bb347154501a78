import type { Queryable } from '../db/database.js';
import { isStorableTime } from '../db/sql.js';
import { AppError, notFound } from '../errors.js';
import { ROW_ID } from '../secrets.js';
import { toEventJson, type EventDelivery, type EventJson } from './event-object.js';
import type { EventRow } from './event-row.js';
import { decodeCursor, encodeCursor } from './events-cursor.js';
import * as repo from './events-repo.js';
import { countMatching, scanEvents } from './events-scan.js';
import { eventThread, type ThreadAround } from './events-thread.js';
import { channelDays, eventVolume, type ChannelDay, type Volume } from './events-volume.js';
import type { EventConditions } from './events-where.js';
import type { PayloadCondition } from './payload-filter.js';
import type { EventStatus } from './event-states.js';

/** The latest delivery of each of these events that has one; passed in by the composition root. */
export type DeliveryLookup = (eventIds: string[]) => Promise<Map<string, EventDelivery>>;

export interface EventFilter {
  channelId?: string;
  /** Only the events of this thread (the rendered `thread_key`). */
  threadKey?: string;
  status?: EventStatus;
  /** Inclusive bound on received_at. */
  from?: Date;
  /** Exclusive bound on received_at. */
  to?: Date;
  /** Case-insensitive text in the payload, prompt, reply or error. */
  q?: string;
  /** `payload.<path>=<value>` conditions, all of which must hold. */
  payload?: PayloadCondition[];
  /** 1–500; 50 when not given. */
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/** An event of a Brain Logs page: long texts cut to their start (`cut` says so). */
export interface EventPreview extends EventJson {
  cut: boolean;
  /** The whole payload's size in bytes, as stored (the preview's own may be much smaller). */
  payload_bytes: number;
}

export interface EventPage<Event = EventJson> {
  data: Event[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
/**
 * At most about this much JSON in one page: fewer events than asked for (with a cursor) when they
 * are large, so a page never needs more memory than this, whatever `limit` and the payloads are.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

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
    if (filter.payload?.length) return this.scanPage(workspaceId, filter);
    const sizes = await this.sizes(workspaceId, filter);
    if (!sizes) return { data: [], next_cursor: null };
    const { listed, more } = sizes;
    // Load only the events whose stored text fits in a page (always at least one)...
    let bytes = 0;
    let fit = 0;
    while (
      fit < listed.length &&
      (fit === 0 || bytes + (listed[fit] as repo.EventSize).bytes <= PAGE_BYTES)
    ) {
      bytes += (listed[fit] as repo.EventSize).bytes;
      fit++;
    }
    const ids = listed.slice(0, fit).map((event) => event.id);
    const rows = await repo.eventsByIds(this.db, workspaceId, ids);
    const deliveries = await this.deliveries(ids);
    // ...then keep those whose JSON fits: escaping makes JSON longer than the text it holds.
    const data: EventJson[] = [];
    let json = 0;
    let last: EventRow | undefined;
    for (const row of rows) {
      const event = toEventJson(row, deliveries.get(row.id));
      json += Buffer.byteLength(JSON.stringify(event)) + 1;
      if (data.length > 0 && json > PAGE_BYTES) break;
      data.push(event);
      last = row;
    }
    const lastListed = listed.findIndex((event) => event.id === last?.id);
    return { data, next_cursor: cursorAfter(last, more || lastListed < listed.length - 1) };
  }

  /**
   * A page for Brain Logs in the panel: payload, prompt and reply cut to their first `chars`
   * characters, so that drawing 50 collapsed rows never loads 50 whole payloads.
   */
  async listPreviews(
    workspaceId: string,
    filter: EventFilter,
    chars: number,
  ): Promise<EventPage<EventPreview>> {
    if (filter.payload?.length) {
      // Payload conditions are decided by the template engine on whole rows (events-scan.ts).
      const page = await this.scanPage(workspaceId, filter);
      const cutTo = (text: string | null) => (text === null ? null : text.slice(0, chars));
      return {
        next_cursor: page.next_cursor,
        data: page.data.map((event) => ({
          ...event,
          payload_bytes: Buffer.byteLength(event.payload),
          payload: event.payload.slice(0, chars),
          prompt: cutTo(event.prompt),
          reply: cutTo(event.reply),
          cut: [event.payload, event.prompt, event.reply].some((t) => (t?.length ?? 0) > chars),
        })),
      };
    }
    const sizes = await this.sizes(workspaceId, filter);
    if (!sizes) return { data: [], next_cursor: null };
    const ids = sizes.listed.map((event) => event.id);
    const rows = await repo.eventPreviewsByIds(this.db, workspaceId, ids, chars);
    const deliveries = await this.deliveries(ids);
    const cutShort = (text: string | null, bytes: number | null) =>
      text !== null && Buffer.byteLength(text) < (bytes ?? 0);
    return {
      data: rows.map((row) => {
        // The byte-order mark is judged on the start returned, not on the whole payload's size.
        const event = toEventJson(
          { ...row, payload_bytes: row.preview_bytes },
          deliveries.get(row.id),
        );
        const cut =
          cutShort(event.payload, row.payload_bytes) ||
          cutShort(row.prompt, row.prompt_bytes) ||
          cutShort(row.reply, row.reply_bytes);
        return { ...event, cut, payload_bytes: Number(row.payload_bytes) };
      }),
      next_cursor: cursorAfter(rows[rows.length - 1], sizes.more),
    };
  }

  /**
   * The ids and sizes of one page of events (undefined when the filter can match nothing), and
   * whether more follow.
   * @throws AppError 400 `invalid_cursor` for a cursor this service did not give out.
   */
  private async sizes(
    workspaceId: string,
    filter: EventFilter,
  ): Promise<{ listed: repo.EventSize[]; more: boolean } | undefined> {
    const limit = Math.min(
      Math.max(Math.trunc(filter.limit ?? DEFAULT_PAGE_SIZE), 1),
      MAX_PAGE_SIZE,
    );
    const after = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const conditions = this.conditions(workspaceId, filter);
    // A channel id that cannot exist matches nothing, like an unknown one.
    if (conditions.channelId === '0') return undefined;
    const listed = await repo.listEventSizes(this.db, {
      ...conditions,
      after,
      // One more than asked tells whether another page exists.
      limit: limit + 1,
    });
    return { listed: listed.slice(0, limit), more: listed.length > limit };
  }

  /**
   * A page of a filter with payload conditions, which the template engine decides on whole rows:
   * read in batches, kept to PAGE_BYTES of JSON like every page.
   */
  private async scanPage(workspaceId: string, filter: EventFilter): Promise<EventPage> {
    const limit = Math.min(
      Math.max(Math.trunc(filter.limit ?? DEFAULT_PAGE_SIZE), 1),
      MAX_PAGE_SIZE,
    );
    const after = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const conditions = this.conditions(workspaceId, filter);
    const rows: EventRow[] = [];
    let bytes = 0;
    let more = false;
    for await (const row of scanEvents(this.db, conditions, { after, batchSize: limit + 1 })) {
      const size =
        Buffer.byteLength(row.payload) +
        (row.prompt?.length ?? 0) +
        (row.reply?.length ?? 0) +
        (row.history.length ? JSON.stringify(row.history).length : 0);
      if (rows.length >= limit || (rows.length > 0 && bytes + size > PAGE_BYTES)) {
        more = true;
        break;
      }
      rows.push(row);
      bytes += size;
    }
    return {
      data: await this.present(rows),
      next_cursor: cursorAfter(rows[rows.length - 1], more),
    };
  }

  /** Rows as the API shows them, with their reply deliveries (one lookup for all of them). */
  async present(rows: EventRow[]): Promise<EventJson[]> {
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

  /** The events of `event`'s thread nearest to it, itself included (see events-thread.ts). */
  thread(
    workspaceId: string,
    event: Pick<EventJson, 'id' | 'channel_id' | 'thread_key'>,
  ): Promise<ThreadAround | undefined> {
    return eventThread(this.db, workspaceId, event);
  }

  /** @throws AppError 404 when the event does not exist in this workspace. */
  async get(workspaceId: string, id: string): Promise<EventJson> {
    const row = ROW_ID.test(id) ? await repo.findEvent(this.db, workspaceId, id) : undefined;
    if (!row) throw notFound('This event');
    return toEventJson(row, (await this.deliveries([row.id])).get(row.id));
  }
}

/** The cursor of the page after the one ending with `last`, or null when nothing follows. */
function cursorAfter(last: EventRow | undefined, more: boolean): string | null {
  return more && last ? encodeCursor({ receivedAt: last.received_at_exact, id: last.id }) : null;
}

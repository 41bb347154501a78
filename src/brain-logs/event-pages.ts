import type { Queryable } from '../db/database.js';
import type { EventJson } from '../events/event-object.js';
import { EventReader } from './event-reader.js';
import type { EventRow } from '../events/event-row.js';
import { decodeCursor, encodeCursor } from './events-cursor.js';
import { filterConditions, pageLimit, type EventFilter } from './events-filter.js';
import {
  eventPreviewsByIds,
  eventsByIds,
  listEventSizes,
  type EventSize,
} from './events-list-repo.js';
import { scanEvents } from './events-scan.js';

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

/**
 * At most about this much JSON in one page: fewer events than asked for (with a cursor) when they
 * are large, so a page never needs more memory than this, whatever `limit` and the payloads are.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

/** Brain Logs one page at a time, newest first, for one workspace: the API's list and the panel's. */
export class EventPages {
  constructor(
    private readonly db: Queryable,
    private readonly reader = new EventReader(db),
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
      (fit === 0 || bytes + (listed[fit] as EventSize).bytes <= PAGE_BYTES)
    ) {
      bytes += (listed[fit] as EventSize).bytes;
      fit++;
    }
    const ids = listed.slice(0, fit).map((event) => event.id);
    const rows = await eventsByIds(this.db, workspaceId, ids);
    const events = await this.reader.present(rows);
    // ...then keep those whose JSON fits: escaping makes JSON longer than the text it holds.
    const data: EventJson[] = [];
    let json = 0;
    let last: EventRow | undefined;
    for (const [i, event] of events.entries()) {
      json += Buffer.byteLength(JSON.stringify(event)) + 1;
      if (data.length > 0 && json > PAGE_BYTES) break;
      data.push(event);
      last = rows[i];
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
    const rows = await eventPreviewsByIds(this.db, workspaceId, ids, chars);
    // The byte-order mark is judged on the start returned, not on the whole payload's size.
    const events = await this.reader.present(
      rows.map((row) => ({ ...row, payload_bytes: row.preview_bytes })),
    );
    const cutShort = (text: string | null, bytes: number | null) =>
      text !== null && Buffer.byteLength(text) < (bytes ?? 0);
    return {
      data: rows.map((row, i) => {
        const event = events[i] as EventJson;
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
  ): Promise<{ listed: EventSize[]; more: boolean } | undefined> {
    const limit = pageLimit(filter);
    const after = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const conditions = filterConditions(workspaceId, filter);
    // A channel id that cannot exist matches nothing, like an unknown one.
    if (conditions.channelId === '0') return undefined;
    const listed = await listEventSizes(this.db, {
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
    const limit = pageLimit(filter);
    const after = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const conditions = filterConditions(workspaceId, filter);
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
      data: await this.reader.present(rows),
      next_cursor: cursorAfter(rows[rows.length - 1], more),
    };
  }
}

/** The cursor of the page after the one ending with `last`, or null when nothing follows. */
function cursorAfter(last: EventRow | undefined, more: boolean): string | null {
  return more && last ? encodeCursor({ receivedAt: last.received_at_exact, id: last.id }) : null;
}

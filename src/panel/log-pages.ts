import { Router } from 'express';
import type { Channel } from '../channels/channels-service.js';
import type { PanelServices } from './panel-services.js';
import { notFound } from '../errors.js';
import { EVENT_STATUSES } from '../events/event-states.js';
import type { EventJson, EventPreview } from '../events/events-service.js';
import { logsUrl, parseLogFilter, QUICK_RANGES } from './log-filters.js';
import { workspaceId } from './panel-auth.js';
import { prettyPayload } from './pretty-json.js';

const PAGE_SIZE = 50;
/**
 * Longer texts are cut in the list, and only this much of them is read from the database (a page
 * of 1 MB payloads would be unreadable, and heavy); the event's own page shows everything.
 */
const LIST_TEXT_LIMIT = 20_000;
const EXCERPT_LENGTH = 160;

export interface EventView extends EventJson {
  channelName: string;
  /** False for a deleted channel: its events stay, its page is gone. */
  channelExists: boolean;
  /** The start of the payload on one line, to scan the list without opening events. */
  excerpt: string;
  payloadText: string;
  payloadIsJson: boolean;
  /** Some text was cut for the list; the full event is at /logs/:id. */
  cut: boolean;
  /** The payload's size in bytes, as stored. */
  sizeBytes: number;
  /** The request headers by name, sorted for reading. */
  headerList: [string, string][];
}

/** An event as the panel draws it; a preview's texts are already cut (`cut`). */
function eventView(event: EventJson | EventPreview, channels: Map<string, Channel>): EventView {
  const channelName =
    channels.get(event.channel_id)?.name ?? `Deleted channel #${event.channel_id}`;
  const cut = 'cut' in event && event.cut;
  const ellipsis = (text: string | null) =>
    cut && text !== null && text.length >= LIST_TEXT_LIMIT ? `${text}…` : text;
  // A payload that is cut is no longer JSON: it is shown as received, up to the limit.
  const payload =
    cut && event.payload.length >= LIST_TEXT_LIMIT
      ? { text: ellipsis(event.payload) as string, isJson: false }
      : prettyPayload(event.payload);
  return {
    ...event,
    prompt: ellipsis(event.prompt),
    reply: ellipsis(event.reply),
    channelName,
    channelExists: channels.has(event.channel_id),
    excerpt: event.payload.slice(0, EXCERPT_LENGTH).replace(/\s+/g, ' '),
    payloadText: payload.text,
    payloadIsJson: payload.isJson,
    cut,
    sizeBytes: Buffer.byteLength(event.payload, 'utf8'),
    headerList: Object.entries(event.headers).sort(([a], [b]) => a.localeCompare(b)),
  };
}

/** Brain Logs: the events of the current workspace, newest first, with filters and keyset pages. */
export function logPages(ctx: PanelServices): Router {
  const router = Router();
  router.use((_req, res, next) => {
    res.locals.area = 'logs';
    next();
  });

  router.get('/', async (req, res) => {
    const ws = workspaceId(res);
    const { form, filter, problems } = parseLogFilter(req.query);
    const channelList = await ctx.channels.list(ws);
    // A channel of another workspace (or none at all) is not a filter value but an unknown channel.
    if (filter.channelId && !channelList.some((c) => c.id === filter.channelId))
      throw notFound('This channel');
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    const page = await ctx.events.listPreviews(
      ws,
      { ...filter, limit: PAGE_SIZE, cursor },
      LIST_TEXT_LIMIT,
    );
    const channels = new Map(channelList.map((c) => [c.id, c]));
    const filtered = Boolean(form.channel || form.thread || form.status || form.from || form.to);
    res.render('logs/index', {
      title: 'Brain Logs',
      form,
      problems,
      channelList,
      statuses: EVENT_STATUSES,
      quickRanges: QUICK_RANGES.map((range) => ({
        ...range,
        href: logsUrl({ ...form, from: '', to: '' }, { since: range.since }),
      })),
      events: page.data.map((event) => eventView(event, channels)),
      nextUrl: page.next_cursor ? logsUrl(form, { cursor: page.next_cursor }) : undefined,
      firstUrl: cursor ? logsUrl(form) : undefined,
      filtered,
      hasChannels: channelList.length > 0,
    });
  });

  router.get('/:id', async (req, res) => {
    const ws = workspaceId(res);
    const event = await ctx.events.get(ws, String(req.params.id));
    const channels = new Map((await ctx.channels.list(ws)).map((c) => [c.id, c]));
    const view = eventView(event, channels);
    const deliveryAttempts = event.delivery ? await ctx.deliveries.attemptsOf(event.id) : [];
    res.render('logs/show', { title: `Event #${event.id}`, event: view, deliveryAttempts });
  });

  return router;
}

import { Router } from 'express';
import type { PanelServices } from './panel-services.js';
import { notFound } from '../platform/errors.js';
import { EVENT_STATUSES } from '../events/event-states.js';
import { logActions } from './log-actions.js';
import { eventView, LIST_TEXT_LIMIT } from './log-event-view.js';
import { filterWords, logsUrl, parseLogFilter, QUICK_RANGES } from './log-filters.js';
import { workspaceId } from './panel-auth.js';
import { dateTimeLocalValue } from './format.js';
import { eventPage } from './log-event-page.js';

const PAGE_SIZE = 50;
/** Brain Logs counts matching events exactly up to here, and says "10,000+" beyond. */
export const COUNT_CAP = 10_000;
const DAY_MS = 86_400_000;
/** How a failed delivery group names where it went: the reply URL's messages count as a webhook. */
const DELIVERY_TARGETS: Record<string, string> = {
  webhook: 'a webhook',
  slack: 'Slack',
  telegram: 'Telegram',
  discord: 'Discord',
  teams: 'Teams',
};

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
    const to = filter.to ?? new Date();
    const from = filter.from ?? new Date(to.getTime() - DAY_MS);
    const [page, count, volume, failures, deliveryFailures] = await Promise.all([
      // Texts one character past the list's limit: enough to know they are cut, never whole 1 MB payloads.
      ctx.eventPages.listPreviews(ws, { ...filter, limit: PAGE_SIZE, cursor }, LIST_TEXT_LIMIT + 1),
      ctx.eventCounts.count(ws, filter, COUNT_CAP + 1),
      ctx.eventCounts.volume(ws, filter, from, to),
      ctx.eventCounts.failures(ws, filter.channelId, from, to),
      ctx.deliveries.failures(ws, filter.channelId, from, to),
    ]);
    const channels = new Map(channelList.map((c) => [c.id, c]));
    const filtered = Boolean(
      form.search ||
      form.channel ||
      form.thread ||
      form.version ||
      form.status ||
      form.from ||
      form.to,
    );
    const query = logsUrl(form).replace(/^\/logs\??/, '');
    const filterSummary = filterWords(form, channels.get(form.channel)?.name);
    const titleWords = [form.search && `“${form.search}”`, filterSummary].filter(Boolean);
    res.render('logs/index', {
      title: titleWords.length ? `Brain Logs · ${titleWords.join(' · ')}` : 'Brain Logs',
      filterSummary,
      pageClass: 'logs-page',
      form,
      problems,
      channelList,
      statuses: EVENT_STATUSES,
      quickRanges: QUICK_RANGES.map((range) => ({
        ...range,
        href: logsUrl({ ...form, from: '', to: '' }, { since: range.since }),
      })),
      events: page.data.map((event) => eventView(event, channels, LIST_TEXT_LIMIT)),
      total: count > COUNT_CAP ? `${COUNT_CAP.toLocaleString('en')}+` : count.toLocaleString('en'),
      totalExact: count <= COUNT_CAP,
      volume,
      failures: failures.map((group) => ({
        ...group,
        last_at: new Date(group.last_at),
        channelName: channels.get(group.channel_id)?.name ?? `Deleted channel #${group.channel_id}`,
        href: logsUrl(
          {
            ...form,
            channel: group.channel_id,
            status: group.status,
            search: group.cause,
            from: dateTimeLocalValue(from),
          },
          {},
        ),
      })),
      deliveryFailures: deliveryFailures.map((group) => ({
        ...group,
        last_at: new Date(group.last_at),
        target: DELIVERY_TARGETS[group.kind] ?? group.kind,
        channelName: channels.get(group.channel_id)?.name ?? `Deleted channel #${group.channel_id}`,
        href: logsUrl({ ...form, channel: group.channel_id, from: dateTimeLocalValue(from) }, {}),
      })),
      volumeFrom: from,
      volumeTo: to,
      query,
      exportUrl: (format: string) =>
        `/logs/export?${new URLSearchParams([...new URLSearchParams(query), ['format', format]])}`,
      nextUrl: page.next_cursor ? logsUrl(form, { cursor: page.next_cursor }) : undefined,
      firstUrl: cursor ? logsUrl(form) : undefined,
      filtered,
      hasChannels: channelList.length > 0,
    });
  });

  router.use(logActions(ctx));
  router.use(eventPage(ctx));
  return router;
}

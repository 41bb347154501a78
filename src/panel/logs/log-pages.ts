import { Router } from 'express';
import type { PanelServices } from '../panel-services.js';
import { notFound } from '../../platform/errors.js';
import { EVENT_STATUSES } from '../../events/event-states.js';
import { logActions } from './log-actions.js';
import { eventView, LIST_TEXT_LIMIT } from './log-event-view.js';
import { targetName } from './delivery-summary.js';
import {
  DELIVERY_CHOICES,
  deliveryTargetName,
  filterWords,
  logsUrl,
  parseLogFilter,
  QUICK_RANGES,
  type LogFilterForm,
} from './log-filters.js';
import { REPLY_URL_TARGET } from '../../brain-logs/delivery-filter.js';
import { workspaceId } from '../panel-auth.js';
import { dateTimeLocalValue } from '../format.js';
import { eventPage } from './log-event-page.js';

const PAGE_SIZE = 50;
/** Brain Logs counts matching events exactly up to here, and says "10,000+" beyond. */
export const COUNT_CAP = 10_000;
const DAY_MS = 86_400_000;
/** The empty filter: a failure group's link sets only what the group counted by. */
const NO_FILTER: LogFilterForm = {
  search: '',
  channel: '',
  thread: '',
  version: '',
  status: '',
  delivery: '',
  delivery_to: '',
  from: '',
  to: '',
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
    const [page, count, volume, failures, deliveryFailures, destinations] = await Promise.all([
      // Texts one character past the list's limit: enough to know they are cut, never whole 1 MB payloads.
      ctx.eventPages.listPreviews(ws, { ...filter, limit: PAGE_SIZE, cursor }, LIST_TEXT_LIMIT + 1),
      ctx.eventCounts.count(ws, filter, COUNT_CAP + 1),
      ctx.eventCounts.volume(ws, filter, from, to),
      ctx.eventCounts.failures(ws, filter.channelId, from, to),
      ctx.deliveries.failures(ws, filter.channelId, from, to),
      // The chosen channel's destinations: the Delivery filter's targets.
      filter.channelId
        ? ctx.destinations.ofChannels([filter.channelId]).then((map) => [...map.values()].flat())
        : [],
    ]);
    const channels = new Map(channelList.map((c) => [c.id, c]));
    // The names of the destinations the page mentions: its events', its failure groups', the
    // Delivery filter's (one statement for all of them).
    const labels = await ctx.destinations.labels([
      ...page.data.map((event) => event.channel_id),
      ...deliveryFailures.map((group) => group.channel_id),
      ...(filter.channelId ? [filter.channelId] : []),
    ]);
    const filtered = Boolean(
      form.search ||
      form.channel ||
      form.thread ||
      form.version ||
      form.status ||
      form.delivery ||
      form.delivery_to ||
      form.from ||
      form.to,
    );
    const query = logsUrl(form).replace(/^\/logs\??/, '');
    // The targets the Delivery filter offers: the reply URL, the channel's destinations, and the
    // one asked for (a destination since removed, or of another channel) so the form keeps it.
    const deliveryTargets = [
      { value: REPLY_URL_TARGET, label: 'Reply URL' },
      ...destinations.map((d) => ({
        value: d.id,
        label: deliveryTargetName(d.id, labels.get(d.id)),
      })),
    ];
    if (form.delivery_to && !deliveryTargets.some((t) => t.value === form.delivery_to))
      deliveryTargets.push({
        value: form.delivery_to,
        label: deliveryTargetName(form.delivery_to, labels.get(form.delivery_to)),
      });
    const filterSummary = filterWords(
      form,
      channels.get(form.channel)?.name,
      form.delivery_to === REPLY_URL_TARGET
        ? undefined
        : deliveryTargets.find((t) => t.value === form.delivery_to)?.label,
    );
    const titleWords = [form.search && `“${form.search}”`, filterSummary].filter(Boolean);
    res.render('logs/index', {
      title: titleWords.length ? `Brain Logs · ${titleWords.join(' · ')}` : 'Brain Logs',
      filterSummary,
      pageClass: 'logs-page',
      form,
      problems,
      channelList,
      statuses: EVENT_STATUSES,
      deliveryChoices: DELIVERY_CHOICES,
      deliveryTargets,
      quickRanges: QUICK_RANGES.map((range) => ({
        ...range,
        href: logsUrl({ ...form, from: '', to: '' }, { since: range.since }),
      })),
      events: page.data.map((event) => eventView(event, channels, LIST_TEXT_LIMIT, labels)),
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
        target: group.destination_id
          ? targetName(labels, group.destination_id, group.kind)
          : deliveryTargetName(REPLY_URL_TARGET, undefined),
        channelName: channels.get(group.channel_id)?.name ?? `Deleted channel #${group.channel_id}`,
        // The events the group counted: its channel's, received in its window, whose newest
        // message to its target failed.
        href: logsUrl({
          ...NO_FILTER,
          channel: group.channel_id,
          delivery: 'failed',
          delivery_to: group.destination_id ?? REPLY_URL_TARGET,
          from: dateTimeLocalValue(from),
          to: form.to,
        }),
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

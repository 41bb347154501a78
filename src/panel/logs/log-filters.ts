import { isEventStatus } from '../../events/event-states.js';
import type { EventFilter } from '../../brain-logs/events-filter.js';
import { isDeliveryFilter, REPLY_URL_TARGET } from '../../brain-logs/delivery-filter.js';
import { isRowId } from '../../platform/ids.js';
import { dateTimeLocalValue, STATUS_LABELS } from '../format.js';
import { parseLogSearch } from './log-search.js';

/** The Brain Logs filter as the page shows it: every value is the text of its form field. */
export interface LogFilterForm {
  /** The search box: `order.status = paid`, free text, or both. */
  search: string;
  channel: string;
  /** A thread key: the events of one thread (linked from an event of it). */
  thread: string;
  /** A version of the channel: the events answered with it (linked from the editor's versions). */
  version: string;
  status: string;
  /** `failed`, `held`, `pending`, `delivered` or `none`: the events with a message in that state. */
  delivery: string;
  /** `reply_url` or a destination's id: only the messages to it count. */
  delivery_to: string;
  from: string;
  to: string;
}

/** The Delivery filter's choices, in the form's order, with the words of the page's title. */
export const DELIVERY_CHOICES = [
  { value: 'failed', label: 'Failed', words: 'Delivery failed' },
  { value: 'held', label: 'Held (delivery off)', words: 'Delivery held' },
  { value: 'pending', label: 'Pending (waiting or being sent)', words: 'Delivery pending' },
  { value: 'delivered', label: 'Delivered', words: 'Delivered' },
  { value: 'none', label: 'No message', words: 'No delivery' },
] as const;

export const QUICK_RANGES = [
  { since: '1h', label: 'last hour', ms: 3_600_000 },
  { since: '24h', label: 'last 24 h', ms: 86_400_000 },
  { since: '7d', label: 'last 7 days', ms: 7 * 86_400_000 },
] as const;

// What a datetime-local input sends: minutes, optionally seconds and milliseconds; no zone.
const DATETIME_LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

/** A datetime-local value read as UTC (the panel labels these fields "UTC"). */
export function parseUtc(text: string): Date | undefined {
  if (!DATETIME_LOCAL.test(text)) return undefined;
  const date = new Date(`${text}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

export interface ParsedLogFilter {
  form: LogFilterForm;
  filter: Omit<EventFilter, 'limit' | 'cursor'>;
  problems: string[];
}

/**
 * Reads the Brain Logs query string. A quick range (`since=1h`) becomes an absolute `from`, so the
 * next pages keep the window the admin chose instead of sliding with the clock.
 */
export function parseLogFilter(query: Record<string, unknown>, now = new Date()): ParsedLogFilter {
  const form: LogFilterForm = {
    search: text(query.search),
    channel: text(query.channel),
    thread: text(query.thread),
    version: text(query.version),
    status: text(query.status),
    delivery: text(query.delivery),
    delivery_to: text(query.delivery_to),
    from: text(query.from),
    to: text(query.to),
  };
  const problems: string[] = [];
  const filter: ParsedLogFilter['filter'] = {};

  const quick = QUICK_RANGES.find((range) => range.since === text(query.since));
  if (quick) {
    filter.from = new Date(now.getTime() - quick.ms);
    form.from = dateTimeLocalValue(filter.from);
    form.to = '';
  }
  // A channel id that cannot be one matches nothing, like an unknown one (ids start at 1).
  if (form.channel) filter.channelId = isRowId(form.channel) ? form.channel : '0';
  if (form.thread) filter.threadKey = form.thread;
  if (form.version) {
    const version = /^[1-9]\d{0,8}$/.test(form.version) ? Number(form.version) : undefined;
    if (version && filter.channelId) filter.version = version;
    else problems.push(`Version “${form.version}” needs a channel and a whole number; ignored.`);
  }
  if (form.search) {
    const search = parseLogSearch(form.search);
    if (search.q) filter.q = search.q.slice(0, 500);
    if (search.payload.length) filter.payload = search.payload.slice(0, 20);
  }
  if (form.status) {
    if (isEventStatus(form.status)) filter.status = form.status;
    else problems.push(`There is no status “${form.status}”; showing every status.`);
  }
  if (form.delivery && !isDeliveryFilter(form.delivery))
    problems.push(`There is no delivery state “${form.delivery}”; showing every event.`);
  if (form.delivery_to && form.delivery_to !== REPLY_URL_TARGET && !isRowId(form.delivery_to))
    problems.push(`There is no destination “${form.delivery_to}”; showing every target.`);
  const state = isDeliveryFilter(form.delivery) ? form.delivery : undefined;
  const to =
    form.delivery_to === REPLY_URL_TARGET || isRowId(form.delivery_to)
      ? form.delivery_to
      : undefined;
  if (state || to) filter.delivery = { state, to };
  for (const bound of ['from', 'to'] as const) {
    if (!form[bound] || filter[bound]) continue;
    const date = parseUtc(form[bound]);
    if (date) filter[bound] = date;
    else
      problems.push(
        `“${form[bound]}” is not a date and time; the ${bound === 'from' ? 'From' : 'To'} bound is ignored.`,
      );
  }
  if (filter.from && filter.to && filter.from >= filter.to) {
    problems.push('From is not before To, so no event can match.');
  }
  return { form, filter, problems };
}

/** The query string of a Brain Logs page with this filter (and optionally a cursor). */
export function logsUrl(form: LogFilterForm, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...form, ...extra }))
    if (value) params.set(name, value);
  const query = params.toString();
  return query ? `/logs?${query}` : '/logs';
}

/**
 * The filter in a few words (`Shop · Failed · from 2024-05-01T10:00:00`), for the page's title
 * and the collapsed filters' summary: a tab or a bookmark says which events it shows.
 */
export function filterWords(
  form: LogFilterForm,
  channelName: string | undefined,
  targetName: string | undefined = undefined,
): string {
  const words: string[] = [];
  if (form.channel) words.push(channelName ?? `channel ${form.channel}`);
  if (form.thread) words.push(`thread ${form.thread}`);
  if (form.status) words.push(STATUS_LABELS[form.status] ?? form.status);
  const delivery = DELIVERY_CHOICES.find((choice) => choice.value === form.delivery);
  if (delivery) words.push(delivery.words);
  if (form.delivery_to) {
    const target = targetName ?? deliveryTargetName(form.delivery_to, undefined);
    words.push(delivery ? `to ${target}` : `messages to ${target}`);
  }
  if (form.from) words.push(`from ${form.from}`);
  if (form.to) words.push(`to ${form.to}`);
  return words.join(' · ');
}

/**
 * A delivery target in words: `the reply URL`, a destination's name (destination-label.ts) when
 * it is known, else `destination #7` (removed, or of another channel).
 */
export function deliveryTargetName(target: string, name: string | undefined): string {
  if (target === REPLY_URL_TARGET) return 'the reply URL';
  return name ?? `destination #${target}`;
}

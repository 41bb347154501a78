import type { Queryable } from '../db/database.js';
import { AppError, invalidField } from '../platform/errors.js';
import * as repo from './usage-repo.js';

export type UsageGroup = 'day' | 'channel';

export interface UsageQuery {
  from?: Date;
  to?: Date;
  group?: UsageGroup;
}

export interface UsageReport {
  from: string;
  to: string;
  group: UsageGroup;
  totals: repo.UsageTotals;
  data: (repo.UsageTotals & ({ day: string } | { channel_id: string; channel_name: string }))[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** The default view: today and the 29 days before it (UTC). */
export const DEFAULT_DAYS = 30;
/** The longest range one report covers, so a day series stays small. */
export const MAX_DAYS = 366;

const ZERO: repo.UsageTotals = {
  events: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
};

/** Tokens and events of a workspace per day or per channel: what its AI use costs. */
export class UsageService {
  constructor(private readonly db: Queryable) {}

  async report(workspaceId: string, query: UsageQuery = {}): Promise<UsageReport> {
    const startOfToday = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const to = query.to ?? new Date(startOfToday + DAY_MS);
    const from = query.from ?? new Date(startOfToday - (DEFAULT_DAYS - 1) * DAY_MS);
    if (from.getTime() >= to.getTime()) {
      throw invalidRange('from must be before to');
    }
    if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) {
      throw invalidRange(`a report covers at most ${MAX_DAYS} days`);
    }
    const group = query.group ?? 'day';
    const range = { workspaceId, from, to };
    const data =
      group === 'day'
        ? fillDays(await repo.usageByDay(this.db, range), from, to)
        : await repo.usageByChannel(this.db, range);
    const totals = { ...ZERO };
    for (const row of data) {
      totals.events += row.events;
      totals.prompt_tokens += row.prompt_tokens;
      totals.completion_tokens += row.completion_tokens;
      totals.total_tokens += row.total_tokens;
    }
    return { from: from.toISOString(), to: to.toISOString(), group, totals, data };
  }
}

/** Every UTC day the range touches, in order, with zeros for days without events (for charts). */
function fillDays(
  rows: (repo.UsageTotals & { day: string })[],
  from: Date,
  to: Date,
): (repo.UsageTotals & { day: string })[] {
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const days: (repo.UsageTotals & { day: string })[] = [];
  for (let t = Math.floor(from.getTime() / DAY_MS) * DAY_MS; t < to.getTime(); t += DAY_MS) {
    const day = new Date(t).toISOString().slice(0, 10);
    days.push(byDay.get(day) ?? { day, ...ZERO });
  }
  return days;
}

function invalidRange(detail: string): AppError {
  return invalidField('', detail);
}

import type { Queryable } from '../db/database.js';
import { AppError, invalidField } from '../platform/errors.js';
import * as repo from './spend-report-repo.js';
import type { SpendQuery } from './spend-schemas.js';

export interface SpendReport extends repo.SpendTotals {
  by_day: repo.DaySpend[];
  by_model: repo.ModelSpend[];
  by_channel: repo.ChannelSpend[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest range one report covers, so a day series stays small. */
export const MAX_SPEND_DAYS = 366;

/** What a workspace's AI calls cost, from the spend ledger: per day, model and channel. */
export class SpendService {
  constructor(private readonly db: Queryable) {}

  /** By default this UTC month; days without calls are listed with zeros (for charts). */
  async report(workspaceId: string, query: SpendQuery = {}): Promise<SpendReport> {
    const range = rangeOf(workspaceId, query);
    const [totals, byDay, byModel, byChannel] = await Promise.all([
      repo.spendTotals(this.db, range),
      repo.spendByDay(this.db, range),
      repo.spendByModel(this.db, range),
      repo.spendByChannel(this.db, range),
    ]);
    return {
      ...totals,
      by_day: fillDays(byDay, range.from, range.to),
      by_model: byModel,
      by_channel: byChannel,
    };
  }

  /** The known costs and the calls of unknown cost, by default this UTC month. */
  totals(workspaceId: string, query: SpendQuery = {}): Promise<repo.SpendTotals> {
    return repo.spendTotals(this.db, rangeOf(workspaceId, query));
  }
}

function rangeOf(workspaceId: string, query: SpendQuery): repo.SpendRange {
  const now = new Date();
  const from = query.from ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const to = query.to ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  if (from.getTime() >= to.getTime()) throw invalidRange('from must be before to');
  if (to.getTime() - from.getTime() > MAX_SPEND_DAYS * DAY_MS) {
    throw invalidRange(`a report covers at most ${MAX_SPEND_DAYS} days`);
  }
  return { workspaceId, from, to };
}

/** Every UTC day the range touches, in order. */
function fillDays(rows: repo.DaySpend[], from: Date, to: Date): repo.DaySpend[] {
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const days: repo.DaySpend[] = [];
  for (let t = Math.floor(from.getTime() / DAY_MS) * DAY_MS; t < to.getTime(); t += DAY_MS) {
    const day = new Date(t).toISOString().slice(0, 10);
    days.push(byDay.get(day) ?? { day, calls: 0, cost_usd: 0 });
  }
  return days;
}

function invalidRange(detail: string): AppError {
  return invalidField('', detail);
}

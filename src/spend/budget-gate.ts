import type { Prices } from '../ai/call-cost.js';
import type { AiCall } from '../ai/fallback-runner.js';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import { budgetExceeded } from './budget-errors.js';
import { budgetOf, type SpentCall } from './spend-record-repo.js';

/** The prefix of the error of a call not made: its model has no known price, and a budget holds. */
export const PRICE_UNKNOWN = 'price_unknown';

/**
 * The calls of one workspace with a budget that may be in flight at once in one process outside
 * the queues' slots (provider tests): the most by which they can pass the budget together.
 */
export const CALLS_IN_FLIGHT = 2;

/** A model a call is about to ask, with how its provider's calls are priced. */
export interface PricedAsk {
  provider: string;
  model: string | null | undefined;
  /** Absent when no call can be made (no such provider): nothing to price. */
  prices?: Prices;
}

/**
 * The `price_unknown:` error of calls in a workspace with a budget when one of them asks a model
 * with no known price (neither the workspace's nor the table's): its cost would count as
 * nothing, so the budget could never stop it. Undefined when every price is known.
 */
export function priceUnknown(asks: readonly PricedAsk[]): string | undefined {
  const unpriced = asks.find(
    (ask) => ask.prices !== undefined && ask.model != null && !ask.prices.priceOf(ask.model),
  );
  if (!unpriced?.model) return undefined;
  const { model, provider } = unpriced;
  return (
    `${PRICE_UNKNOWN}: the model "${model}" (provider "${provider}") has no known price, so the ` +
    `workspace's monthly budget could not count its calls; set one with PUT ` +
    `/api/v1/prices/${encodeURIComponent(model)} (0 and 0 for a model you run yourself).`
  );
}

/** Whose calls they are: an event's, a trial's or a provider test's. */
export interface SpendingOn {
  workspace_id: string;
  /** Null for a provider test. */
  channel_id: string | null;
  /** The event, or null for a trial's or a test's calls. */
  eventId: string | null;
  /** The records are waited for (the workspace has a budget). */
  budgeted: boolean;
}

/**
 * Records the spend of each call, under the provider and model it asked (its cost is already on
 * the call, see callRecord). When `on.budgeted` the records are waited for, before the call's
 * slot or place is given back: so at most the calls in flight are ever uncounted, and the budget
 * is passed by no more than they cost. A record that cannot be written is logged; the reply is
 * not held back for it.
 */
export async function settleSpend(
  recordSpend: (call: SpentCall) => Promise<void>,
  log: Logger,
  on: SpendingOn,
  calls: readonly AiCall[],
): Promise<void> {
  const recorded = calls.map((call) =>
    recordSpend({
      workspaceId: on.workspace_id,
      channelId: on.channel_id,
      eventId: on.eventId,
      provider: call.provider,
      model: call.model,
      promptTokens: call.usage?.prompt_tokens ?? null,
      completionTokens: call.usage?.completion_tokens ?? null,
      cacheReadTokens: call.usage?.cache_read_tokens ?? 0,
      cacheWriteTokens: call.usage?.cache_write_tokens ?? 0,
      costUsd: call.cost_usd,
    }).catch((error: unknown) =>
      log.error({ eventId: on.eventId, err: error }, 'spend of an AI call not recorded'),
    ),
  );
  if (on.budgeted) await Promise.all(recorded);
}

/**
 * Where every AI call passes the workspace's monthly budget. A call starts only while the
 * month's spend is under the budget, holds a reservation while in flight, and gives it back
 * only once its spend is recorded (settleSpend), so calls in flight are the most the budget can
 * be passed by. The queues' calls (events, trials) are reserved by their slots: the claim and
 * startAttempts read the budget, and the slot is freed after settleSpend. Other calls (a
 * provider test) reserve one of the workspace's CALLS_IN_FLIGHT places here, with `call`.
 */
export class BudgetGate {
  private readonly places = new Map<string, { held: number; waiting: (() => void)[] }>();

  constructor(
    private readonly db: Queryable,
    private readonly recordSpend: (call: SpentCall) => Promise<void>,
    private readonly log: Logger,
    private readonly inFlight = CALLS_IN_FLIGHT,
  ) {}

  /**
   * Makes one call outside the queues: `403 budget_exceeded` (the webhook's refusal) while the
   * month's spend has reached the budget, else `call(budgeted)`, whose calls' spend is recorded
   * before this resolves. With a budget the call first takes a place (waiting for one while
   * CALLS_IN_FLIGHT are taken) and reads the budget only then.
   */
  async call<T>(
    workspaceId: string,
    call: (budgeted: boolean) => Promise<{ value: T; calls: readonly AiCall[] }>,
  ): Promise<T> {
    const first = await budgetOf(this.db, workspaceId);
    if (!first.budgeted) return this.settled(workspaceId, false, call);
    if (first.over) throw budgetExceeded(first);
    const release = await this.take(workspaceId);
    try {
      const budget = await budgetOf(this.db, workspaceId);
      if (budget.over) throw budgetExceeded(budget);
      return await this.settled(workspaceId, budget.budgeted, call);
    } finally {
      release();
    }
  }

  private async settled<T>(
    workspaceId: string,
    budgeted: boolean,
    call: (budgeted: boolean) => Promise<{ value: T; calls: readonly AiCall[] }>,
  ): Promise<T> {
    const { value, calls } = await call(budgeted);
    // Waited for with or without a budget: the caller's answer says what was spent.
    const on = { workspace_id: workspaceId, channel_id: null, eventId: null, budgeted: true };
    await settleSpend(this.recordSpend, this.log, on, calls);
    return value;
  }

  /** One of the workspace's places; resolves to what gives it back (to the next waiting, if any). */
  private async take(workspaceId: string): Promise<() => void> {
    const places = this.places.get(workspaceId) ?? { held: 0, waiting: [] };
    this.places.set(workspaceId, places);
    if (places.held < this.inFlight) places.held++;
    else await new Promise<void>((resolve) => places.waiting.push(resolve));
    return () => {
      const next = places.waiting.shift();
      if (next) next();
      else if (--places.held === 0) this.places.delete(workspaceId);
    };
  }
}

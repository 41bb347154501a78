import type { Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';
import { BUDGET_RESETS_AT, overBudget, spentThisMonth } from './budget-sql.js';

/** One AI call as the spend ledger keeps it. */
export interface SpentCall {
  workspaceId: string;
  channelId: string | null;
  /** Null for a call of a trial, which changes no event. */
  eventId: string | null;
  /** The provider's name (`default` for the server's AI_* configuration). */
  provider: string;
  model: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Input tokens read from and written to the provider's prompt cache. */
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Null when the model's price or the call's usage is unknown. */
  costUsd: number | null;
}

/**
 * Records calls in the ledger and adds their costs to their workspaces' counters of the month,
 * in one statement. The workspace rows are locked in id order, as the receiver's statement
 * locks them (`locked` is read whole, through the join below the aggregate, before any row is
 * updated), so the two never deadlock; the counters are exact across processes, as the quota's.
 */
export async function recordCalls(
  db: Queryable,
  calls: readonly SpentCall[],
  deadline?: number,
): Promise<void> {
  await db.query(
    `with calls as (
       select * from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[],
                            $6::integer[], $7::integer[], $8::numeric[], $9::integer[],
                            $10::integer[])
         as c(workspace_id, channel_id, event_id, provider, model, prompt_tokens,
              completion_tokens, cost_usd, cache_read_tokens, cache_write_tokens)
     ),
     ledger as (
       insert into spend (workspace_id, channel_id, event_id, provider, model, prompt_tokens,
                          completion_tokens, cost_usd, cache_read_tokens, cache_write_tokens)
       select * from calls
     ),
     locked as (
       select id from workspaces
       where id in (select workspace_id from calls where cost_usd > 0)
       order by id
       for update
     ),
     costs as (
       select calls.workspace_id, sum(calls.cost_usd) as cost_usd
       from calls join locked on locked.id = calls.workspace_id
       where calls.cost_usd > 0
       group by calls.workspace_id
     )
     update workspaces set
       spent_usd = ${spentThisMonth('workspaces')} + costs.cost_usd,
       spend_period_start = ${CURRENT_MONTH_START}
     from costs
     where workspaces.id = costs.workspace_id`,
    [
      calls.map((call) => call.workspaceId),
      calls.map((call) => call.channelId),
      calls.map((call) => call.eventId),
      calls.map((call) => call.provider),
      calls.map((call) => call.model),
      calls.map((call) => call.promptTokens),
      calls.map((call) => call.completionTokens),
      calls.map((call) => (call.costUsd === null ? null : String(call.costUsd))),
      calls.map((call) => call.cacheReadTokens),
      calls.map((call) => call.cacheWriteTokens),
    ],
    // Planned for each call, as the worker's statements are (see claimEvents).
    { deadline },
  );
}

/** A workspace's monthly budget as a call about to start sees it. */
export type BudgetState =
  | { budgeted: false; over: false }
  | { budgeted: true; over: boolean; monthlyBudgetUsd: number; resetsAt: Date };

/** Whether the workspace has a budget, and whether it has spent it, so that no new AI call may start. */
export async function budgetOf(db: Queryable, workspaceId: string): Promise<BudgetState> {
  const { rows } = await db.query<{ budget: number | null; over: boolean; resets_at: Date }>(
    `select w.monthly_budget_usd::float8 as budget, ${overBudget('w')} as over,
            ${BUDGET_RESETS_AT} as resets_at
     from workspaces w where w.id = $1`,
    [workspaceId],
  );
  const row = rows[0];
  if (!row || row.budget === null) return { budgeted: false, over: false };
  return {
    budgeted: true,
    over: row.over,
    monthlyBudgetUsd: row.budget,
    resetsAt: new Date(row.resets_at),
  };
}

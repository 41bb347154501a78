import { CURRENT_MONTH_START } from '../db/sql.js';

// The month's spend and the budget, read from a workspace row (`w` names it in the statement).
// Spend counted in an earlier month reads as 0: the budget starts again when a month begins,
// without a job having to reset anything.

/** The workspace's spend this UTC month, in USD (numeric). */
export const spentThisMonth = (w: string) =>
  `(case when ${w}.spend_period_start < ${CURRENT_MONTH_START} then 0 else ${w}.spent_usd end)`;

/** True while the workspace has spent its monthly budget: no new AI call starts for it. */
export const overBudget = (w: string) =>
  `(${w}.monthly_budget_usd is not null and ${spentThisMonth(w)} >= ${w}.monthly_budget_usd)`;

/** When the month's spend starts again at 0: the first instant of the next UTC month. */
export const BUDGET_RESETS_AT = `(${CURRENT_MONTH_START} + interval '1 month')`;

import { AppError } from '../platform/errors.js';

/**
 * The refusal of anything that would start an AI call once the workspace has spent its monthly
 * budget: a webhook (the receiver's refusal catalogue lists it) or a provider test. As the
 * quota's: when the month's spend starts again at 0, and the budget it reached.
 */
export const budgetExceeded = (budget: { monthlyBudgetUsd: number; resetsAt: Date }) =>
  new AppError(
    403,
    'budget_exceeded',
    'AI budget used up',
    `The workspace has spent its AI budget of ${budget.monthlyBudgetUsd} USD for this month; ` +
      `it starts again at ${budget.resetsAt.toISOString()}.`,
    {},
    { resets_at: budget.resetsAt.toISOString(), monthly_budget_usd: budget.monthlyBudgetUsd },
  );

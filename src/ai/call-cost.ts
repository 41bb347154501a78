import type { TokenUsage } from './ai-provider.js';

/** USD per million tokens. */
export interface Price {
  input_per_mtok: number;
  output_per_mtok: number;
}

/** How the calls of one workspace and provider are priced, by the model each names. */
export interface Prices {
  /** The workspace's own price for the model, else the price table's, else undefined. */
  priceOf(model: string | null): Price | undefined;
}

const ZERO: Price = { input_per_mtok: 0, output_per_mtok: 0 };

/** The echo stand-in: no model is asked, nothing is paid. */
export const FREE: Prices = { priceOf: () => ZERO };

/**
 * What one AI call cost in USD: (prompt tokens × input + completion tokens × output) / 1e6,
 * unrounded. A free price costs 0 whatever the usage; otherwise null when the model's price or
 * the call's usage is unknown. The one function every call is costed with.
 */
export function costOfCall(
  prices: Prices,
  model: string | null,
  usage: TokenUsage | null | undefined,
): number | null {
  const price = prices.priceOf(model);
  if (!price) return null;
  if (price.input_per_mtok === 0 && price.output_per_mtok === 0) return 0;
  const prompt = usage?.prompt_tokens;
  const completion = usage?.completion_tokens;
  if (prompt == null || completion == null) return null;
  return (prompt * price.input_per_mtok + completion * price.output_per_mtok) / 1_000_000;
}

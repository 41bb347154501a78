import type { TokenUsage } from './ai-provider.js';

/** USD per million tokens. */
export interface Price {
  input_per_mtok: number;
  output_per_mtok: number;
  /** Input tokens read from the provider's prompt cache; absent: priced as input. */
  cache_read_per_mtok?: number;
  /** Input tokens written to the provider's prompt cache; absent: priced as input. */
  cache_write_per_mtok?: number;
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
 * What one AI call cost in USD: ((prompt − cache read − cache write) tokens × input + cache
 * read × its price + cache write × its price + completion tokens × output) / 1e6, unrounded. A free price costs 0 whatever the usage; otherwise null when the model's price or
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
  const read = usage?.cache_read_tokens ?? 0;
  const write = usage?.cache_write_tokens ?? 0;
  const input = price.input_per_mtok;
  return (
    ((prompt - read - write) * input +
      read * (price.cache_read_per_mtok ?? input) +
      write * (price.cache_write_per_mtok ?? input) +
      completion * price.output_per_mtok) /
    1_000_000
  );
}

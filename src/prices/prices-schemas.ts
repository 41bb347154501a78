import { z } from 'zod';

/** A model name as a channel's `ai.model` names it (URL-decoded from the path). */
export const modelNameSchema = z.string().min(1).max(200);

const perMillion = z.number().min(0).max(1_000_000);

/** `PUT /api/v1/prices/{model}`: USD per million tokens. */
export const priceInputSchema = z.strictObject({
  input_per_mtok: perMillion,
  output_per_mtok: perMillion,
  /** Tokens read from a provider's prompt cache; left out: the shipped table's, else input's. */
  cache_read_per_mtok: perMillion.optional(),
  /** Tokens written to a provider's prompt cache; likewise. */
  cache_write_per_mtok: perMillion.optional(),
});

export type PriceInput = z.infer<typeof priceInputSchema>;

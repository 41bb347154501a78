import { z } from 'zod';
import { PROVIDER_NAME } from '../ai/ai-settings.js';
import { PROVIDER_KINDS } from './provider-kinds.js';

/** What channels write in `ai.provider` and `ai.fallbacks[].provider`. */
const providerName = z.string().regex(PROVIDER_NAME, 'must be 1 to 64 letters, digits, "-" or "_"');

const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .max(2000, 'must be at most 2000 characters long');

const apiKey = z.string().min(1, 'must not be empty').max(10_000);

export const createProviderSchema = z.strictObject({
  name: providerName,
  kind: z.enum(PROVIDER_KINDS),
  base_url: baseUrl.nullish(),
  api_key: apiKey.nullish(),
});

/**
 * `api_key: null` clears the key; a member left out keeps its value, but for the key when the
 * server changes (`base_url`, `kind`): see ProvidersService.update.
 */
export const updateProviderSchema = z.strictObject({
  name: providerName.optional(),
  kind: z.enum(PROVIDER_KINDS).optional(),
  base_url: baseUrl.nullish(),
  api_key: apiKey.nullish(),
});

export const testProviderSchema = z.strictObject({
  model: z.string().trim().min(1, 'must not be empty').max(200),
});

export type CreateProvider = z.infer<typeof createProviderSchema>;
export type UpdateProvider = z.infer<typeof updateProviderSchema>;

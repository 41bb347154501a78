import { z } from 'zod';
import { roleSchema } from '../platform/roles.js';

export const workspacePatchSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  chat_quota: z.number().int().min(0).max(2_000_000_000).optional(),
  chats_used: z.literal(0, { error: 'can only be set to 0 (reset usage)' }).optional(),
  /** USD per calendar month (UTC); null removes the budget. */
  monthly_budget_usd: z.number().min(0).max(1_000_000_000).nullable().optional(),
});

export type WorkspacePatch = z.infer<typeof workspacePatchSchema>;

/** `POST /api/v1/api-keys`: a name that tells the key apart in lists (the key is shown once). */
export const apiKeyCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  // A key made before roles could do everything; one made without a role still can.
  role: roleSchema.default('owner'),
});

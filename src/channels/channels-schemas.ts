import { z } from 'zod';
import { ROW_ID } from '../secrets.js';
import { allowedIpsSchema, dedupSchema, verificationSchema } from './sender-schemas.js';

const name = z.string().trim().min(1, 'must not be empty').max(200);
// An empty template is allowed: its events are kept and end `skipped` without an AI call.
const template = z.string().max(100_000);

export const createChannelSchema = z.strictObject({
  name,
  template,
  enabled: z.boolean().optional(),
  verification: verificationSchema.optional(),
  allowed_ips: allowedIpsSchema.optional(),
  dedup: dedupSchema.optional(),
});

export const updateChannelSchema = z.strictObject({
  name: name.optional(),
  template: template.optional(),
  enabled: z.boolean().optional(),
  verification: verificationSchema.optional(),
  allowed_ips: allowedIpsSchema.optional(),
  dedup: dedupSchema.optional(),
});

export const channelIdSchema = z.string().regex(ROW_ID, 'must be a channel id');

export type CreateChannel = z.infer<typeof createChannelSchema>;
export type UpdateChannel = z.infer<typeof updateChannelSchema>;

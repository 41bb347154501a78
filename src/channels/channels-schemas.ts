import { z } from 'zod';
import { aiSettingsInputSchema } from '../ai/ai-settings.js';
import { acceptWhenSchema } from '../conditions/condition-schemas.js';
import { destinationsSchema } from '../destinations/destination-schemas.js';
import {
  allowedIpsSchema,
  allowedOriginsSchema,
  dedupSchema,
  verificationSchema,
} from './sender-schemas.js';

const name = z.string().trim().min(1, 'must not be empty').max(200);
// An empty template is allowed: its events are kept and end `skipped` without an AI call.
const template = z.string().max(100_000);

/**
 * Where the channel's finished events are POSTed. A change merges into what is set: `url`
 * alone leaves `enabled` as it was; `url: null` turns delivery off. `disabled_reason` is set
 * by the service (a 410) and may be sent back as read, but is not written.
 */
const replyDelivery = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .max(2000, 'must be at most 2000 characters long')
    .nullable()
    .optional(),
  enabled: z.boolean().optional(),
  disabled_reason: z.string().nullable().optional(),
});

export const createChannelSchema = z.strictObject({
  name,
  template,
  enabled: z.boolean().optional(),
  verification: verificationSchema.optional(),
  allowed_ips: allowedIpsSchema.optional(),
  allowed_origins: allowedOriginsSchema.optional(),
  dedup: dedupSchema.optional(),
  reply_delivery: replyDelivery.optional(),
  ai: aiSettingsInputSchema.nullish(),
  accept_when: acceptWhenSchema.nullish(),
  /** A PATCH with it replaces the list (see DestinationsService.replace). */
  destinations: destinationsSchema.optional(),
});

/** A PATCH: the members of a create, each optional; members left out keep their value (an
 * `accept_when` of null or [] accepts every payload). */
export const updateChannelSchema = createChannelSchema.partial();

/** A version number in a path: 1 to 2^31-1. */
export const versionSchema = z
  .string()
  .regex(/^[1-9]\d{0,9}$/)
  .transform(Number)
  .pipe(z.number().max(2_147_483_647));

export type CreateChannel = z.infer<typeof createChannelSchema>;
export type UpdateChannel = z.infer<typeof updateChannelSchema>;
export type ReplyDeliveryChange = z.infer<typeof replyDelivery>;

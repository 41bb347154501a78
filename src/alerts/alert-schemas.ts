import { z } from 'zod';
import { destinationSchema, type DestinationInput } from '../destinations/destination-schemas.js';
import { rowId } from '../platform/ids.js';

const channelId = z
  .union([z.string(), z.number().int()])
  .transform(String)
  .pipe(rowId('must be a channel id'));

const windowS = z
  .number()
  .int()
  .min(10)
  .max(31 * 24 * 3600);

/** The six conditions an alert can watch (see alert-conditions.ts for what each measures). */
export const conditionSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('failure_rate'),
    channel_id: channelId.optional(),
    threshold: z.number().gt(0).max(1),
    window_s: windowS,
    min_events: z.number().int().min(1).max(1_000_000),
  }),
  z.strictObject({
    type: z.literal('rejections'),
    channel_id: channelId.optional(),
    count: z.number().int().min(1).max(1_000_000_000),
    window_s: windowS,
  }),
  z.strictObject({
    type: z.literal('delivery_failed'),
    channel_id: channelId.optional(),
    /** Fire once a delivery has failed this many attempts, before its schedule ends. */
    after_attempts: z.number().int().min(1).max(20).optional(),
  }),
  z.strictObject({
    type: z.literal('queue_age'),
    seconds: z
      .number()
      .int()
      .min(1)
      .max(31 * 24 * 3600),
  }),
  z.strictObject({ type: z.literal('budget'), percent: z.number().gt(0).max(1000) }),
  /** Events wait for an operator's approval of a tool call (see src/approvals/). */
  z.strictObject({ type: z.literal('approval_waiting'), channel_id: channelId.optional() }),
]);

/**
 * Where an alert says it started firing and cleared: one destination, as a channel's
 * destinations take it. Its `message` is a template over `{alert, state, value, workspace}`; a
 * `webhook` sends the Standard Webhooks message signed with the workspace's alert secret
 * instead. `when` and `enabled` are a channel's and do not apply here.
 */
export const notifySchema = destinationSchema;

/**
 * Seconds a condition must hold at every check before the alert fires, and must not hold before
 * it clears: a blip shorter than that changes nothing.
 */
export const MAX_FOR_S = 3600;

export const createAlertSchema = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(200),
  condition: conditionSchema,
  notify: notifySchema,
  enabled: z.boolean().optional(),
  for_s: z.number().int().min(0).max(MAX_FOR_S).optional(),
});

export const updateAlertSchema = createAlertSchema.partial();

export type AlertCondition = z.infer<typeof conditionSchema>;
export type AlertNotify = DestinationInput;
export type CreateAlert = z.infer<typeof createAlertSchema>;
export type UpdateAlert = z.infer<typeof updateAlertSchema>;

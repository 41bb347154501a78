import { z } from 'zod';
import { ROW_ID } from '../platform/secrets.js';

const channelId = z
  .union([z.string(), z.number().int()])
  .transform(String)
  .refine((id) => ROW_ID.test(id), 'must be a channel id');

const windowS = z
  .number()
  .int()
  .min(10)
  .max(31 * 24 * 3600);

/** The five conditions an alert can watch (see alert-conditions.ts for what each measures). */
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
  z.strictObject({ type: z.literal('delivery_failed'), channel_id: channelId.optional() }),
  z.strictObject({
    type: z.literal('queue_age'),
    seconds: z
      .number()
      .int()
      .min(1)
      .max(31 * 24 * 3600),
  }),
  z.strictObject({ type: z.literal('budget'), percent: z.number().gt(0).max(1000) }),
]);

/** The destination kinds an alert can notify through. */
export const NOTIFY_KINDS = ['webhook'] as const;

/**
 * Where an alert says it started firing and cleared: one destination. `message` is a template
 * over `{alert, state, value, workspace}` for the chat kinds; a `webhook` sends the Standard
 * Webhooks message instead.
 */
export const notifySchema = z
  .looseObject({ kind: z.string() })
  .superRefine((notify, ctx) => {
    if (!(NOTIFY_KINDS as readonly string[]).includes(notify.kind))
      ctx.addIssue({
        code: 'custom',
        path: ['kind'],
        message: `must be one of: ${NOTIFY_KINDS.join(', ')} (other destination kinds are not available for alerts yet)`,
      });
  })
  .pipe(
    z.strictObject({
      kind: z.enum(NOTIFY_KINDS),
      url: z
        .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
        .max(2000, 'must be at most 2000 characters long'),
      message: z.string().max(10_000).optional(),
    }),
  );

export const createAlertSchema = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(200),
  condition: conditionSchema,
  notify: notifySchema,
  enabled: z.boolean().optional(),
});

export const updateAlertSchema = createAlertSchema.partial();

/** A row id; anything else answers like an unknown alert. */
export function alertId(raw: unknown): string {
  return typeof raw === 'string' && ROW_ID.test(raw) ? raw : '0';
}

export type AlertCondition = z.infer<typeof conditionSchema>;
export type AlertNotify = z.infer<typeof notifySchema>;
export type CreateAlert = z.infer<typeof createAlertSchema>;
export type UpdateAlert = z.infer<typeof updateAlertSchema>;

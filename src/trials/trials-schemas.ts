import { z } from 'zod';
import { aiSettingsInputSchema, PROVIDER_NAME } from '../ai/ai-settings.js';
import { conditionSchema } from '../conditions/condition-schemas.js';
import { rowId } from '../platform/ids.js';

/** The most events one trial asks. */
export const MAX_TRIAL_EVENTS = 100;

/** The most checks one trial applies to each side of its results. */
export const MAX_TRIAL_CHECKS = 10;

const eventId = z.union([
  rowId('must be an event id'),
  z.number().int().positive().transform(String),
]);

/** A check reads a side's `status`, its reply's text (`reply`) or a JSON reply's member. */
const trialCheck = conditionSchema(['status', 'reply']);

/** Up to 10 checks, each applied on its own to both sides of every result. */
export const trialChecksSchema = z
  .array(trialCheck)
  .max(MAX_TRIAL_CHECKS, `must hold at most ${MAX_TRIAL_CHECKS} checks`);

/** The model that compares the two replies of each result, and what it judges them by. */
const judgeSchema = z.strictObject({
  /** Left out: the channel's provider. */
  provider: z
    .string()
    .regex(PROVIDER_NAME, 'must be a provider name: 1 to 64 letters, digits, "-" or "_"')
    .optional(),
  model: z.string().trim().min(1, 'must not be empty').max(200),
  rubric: z.string().trim().min(1, 'must not be empty').max(10_000),
});

/** `POST /api/v1/channels/{id}/trials`: what to try (left out: the channel's own), and on what. */
export const createTrialSchema = z.strictObject({
  template: z.string().max(100_000).optional(),
  ai: aiSettingsInputSchema.optional(),
  events: z.union([
    z.strictObject({ last: z.number().int().min(1).max(MAX_TRIAL_EVENTS) }),
    z.strictObject({ ids: z.array(eventId).min(1).max(MAX_TRIAL_EVENTS) }),
  ]),
  checks: trialChecksSchema.optional(),
  judge: judgeSchema.optional(),
});

export type CreateTrial = z.infer<typeof createTrialSchema>;
export type TrialJudge = z.infer<typeof judgeSchema>;

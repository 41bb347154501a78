import { z } from 'zod';
import { aiSettingsInputSchema } from '../ai/ai-settings.js';
import { rowId } from '../platform/ids.js';

/** The most events one trial asks. */
export const MAX_TRIAL_EVENTS = 100;

const eventId = z.union([
  rowId('must be an event id'),
  z.number().int().positive().transform(String),
]);

/** `POST /api/v1/channels/{id}/trials`: what to try (left out: the channel's own), and on what. */
export const createTrialSchema = z.strictObject({
  template: z.string().max(100_000).optional(),
  ai: aiSettingsInputSchema.optional(),
  events: z.union([
    z.strictObject({ last: z.number().int().min(1).max(MAX_TRIAL_EVENTS) }),
    z.strictObject({ ids: z.array(eventId).min(1).max(MAX_TRIAL_EVENTS) }),
  ]),
});

export type CreateTrial = z.infer<typeof createTrialSchema>;

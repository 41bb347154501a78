import { z } from 'zod';
import { isStorableTime } from '../db/sql.js';

/** An ISO 8601 instant (with Z or an offset) or a date, which means its midnight UTC. */
const instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text))
  .refine(isStorableTime, 'must be between years 1 and 9999');

/** `GET /api/v1/usage` query: `from` inclusive, `to` exclusive (both bound received_at). */
export const usageQuerySchema = z.strictObject({
  from: instant.optional(),
  to: instant.optional(),
  group: z.enum(['day', 'channel']).optional(),
});

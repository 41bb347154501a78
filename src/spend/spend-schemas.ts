import { z } from 'zod';
import { isStorableTime } from '../db/sql.js';

/** An ISO 8601 instant (with Z or an offset) or a date, which means its midnight UTC. */
const instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text))
  .refine(isStorableTime, 'must be between years 1 and 9999');

/** `GET /api/v1/spend` query: `from` inclusive, `to` exclusive (both bound the calls' time). */
export const spendQuerySchema = z.strictObject({
  from: instant.optional(),
  to: instant.optional(),
});

export type SpendQuery = z.infer<typeof spendQuerySchema>;

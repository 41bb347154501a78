import { z } from 'zod';
import { ROW_ID } from '../secrets.js';
import { EVENT_STATUSES } from './event-states.js';
import { isStorableTime, MAX_PAGE_SIZE, type EventFilter } from './events-service.js';

/** An ISO 8601 instant (with Z or an offset) or a date, which means its midnight UTC. */
const instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text))
  .refine(isStorableTime, 'must be between years 1 and 9999');

/** `GET /api/v1/events` query; a parameter given twice, or not listed here, is a 400. */
export const listEventsQuerySchema = z
  .strictObject({
    channel_id: z.string().regex(ROW_ID, 'must be a channel id').optional(),
    status: z.enum(EVENT_STATUSES).optional(),
    from: instant.optional(),
    to: instant.optional(),
    limit: z
      .string()
      .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`)
      .transform(Number)
      .pipe(
        z
          .number()
          .min(1, 'must be at least 1')
          .max(MAX_PAGE_SIZE, `must be at most ${MAX_PAGE_SIZE}`),
      )
      .optional(),
    cursor: z.string().min(1).optional(),
  })
  .transform((query): EventFilter => ({
    channelId: query.channel_id,
    status: query.status,
    from: query.from,
    to: query.to,
    limit: query.limit,
    cursor: query.cursor,
  }));

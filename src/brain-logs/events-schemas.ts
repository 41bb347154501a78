import { z } from 'zod';
import { isStorableTime } from '../db/sql.js';
import { rowId } from '../platform/ids.js';
import { EVENT_STATUSES } from '../events/event-states.js';
import { MAX_PAGE_SIZE, type EventFilter } from './events-filter.js';
import { takePayloadConditions } from './payload-filter.js';

/** An ISO 8601 instant (with Z or an offset) or a date, which means its midnight UTC. */
const instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text))
  .refine(isStorableTime, 'must be between years 1 and 9999');

const channelId = rowId('must be a channel id');

/** A channel version: a whole number from 1 (as query text, or a number in a JSON body). */
const version = z
  .union([z.string().regex(/^[1-9]\d{0,9}$/, 'must be a whole number from 1'), z.number()])
  .transform(Number)
  .pipe(z.number().int().min(1, 'must be at least 1').max(2_147_483_647));

/** The filter of Brain Logs, shared by the list, export, live tail and bulk replay. */
const filterFields = {
  channel_id: channelId.optional(),
  status: z.enum(EVENT_STATUSES).optional(),
  from: instant.optional(),
  to: instant.optional(),
  q: z.string().max(500, 'must be at most 500 characters').optional(),
  thread_key: z.string().max(1000).optional(),
  version: version.optional(),
};

type FilterFields = {
  channel_id?: string;
  status?: EventFilter['status'];
  from?: Date;
  to?: Date;
  q?: string;
  thread_key?: string;
  version?: number;
};

/** A version number means something only within one channel. */
function versionNeedsChannel(query: FilterFields, ctx: z.RefinementCtx): void {
  if (query.version !== undefined && query.channel_id === undefined) {
    ctx.addIssue({ code: 'custom', path: ['version'], message: 'needs channel_id' });
  }
}

const toFilter = (query: FilterFields): EventFilter => ({
  channelId: query.channel_id,
  status: query.status,
  from: query.from,
  to: query.to,
  q: query.q === '' ? undefined : query.q,
  threadKey: query.thread_key,
  version: query.version,
});

const limit = z
  .string()
  .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`)
  .transform(Number)
  .pipe(
    z.number().min(1, 'must be at least 1').max(MAX_PAGE_SIZE, `must be at most ${MAX_PAGE_SIZE}`),
  );

/** `GET /api/v1/events` query; a parameter given twice, or not listed here, is a 400. */
const listQuerySchema = z
  .strictObject({ ...filterFields, limit: limit.optional(), cursor: z.string().min(1).optional() })
  .superRefine(versionNeedsChannel)
  .transform((query): EventFilter => ({
    ...toFilter(query),
    limit: query.limit,
    cursor: query.cursor,
  }));

/** The filter of `GET /api/v1/events`, `payload.<path>=<value>` conditions included. */
export function parseListQuery(query: Record<string, unknown>): EventFilter {
  const { conditions, rest } = takePayloadConditions(query);
  return { ...listQuerySchema.parse(rest), payload: conditions };
}

const exportQuerySchema = z
  .strictObject({ ...filterFields, format: z.enum(['jsonl', 'csv']).default('jsonl') })
  .superRefine(versionNeedsChannel)
  .transform((query) => ({ format: query.format, filter: toFilter(query) }));

/** `GET /api/v1/events/export`: the list's filter and a format. */
export function parseExportQuery(query: Record<string, unknown>): {
  format: 'jsonl' | 'csv';
  filter: EventFilter;
} {
  const { conditions, rest } = takePayloadConditions(query);
  const parsed = exportQuerySchema.parse(rest);
  return { format: parsed.format, filter: { ...parsed.filter, payload: conditions } };
}

/** `GET /api/v1/events/stream`: the list's filter. */
export function parseStreamQuery(query: Record<string, unknown>): EventFilter {
  const { conditions, rest } = takePayloadConditions(query);
  const parsed = z.strictObject(filterFields).superRefine(versionNeedsChannel).parse(rest);
  return { ...toFilter(parsed), payload: conditions };
}

/** A JSON body may give an id as a number. */
const bodyChannelId = z
  .union([channelId, z.number().int().positive().transform(String)])
  .optional();

/** Required: a body that forgot it must not replay (and spend the quota on) every event. */
const dryRun = z.boolean({
  error: (issue) =>
    issue.input === undefined
      ? 'is required: true only counts the events, false replays them'
      : undefined,
});

const replayBodySchema = z
  .strictObject({ ...filterFields, channel_id: bodyChannelId, dry_run: dryRun })
  .superRefine(versionNeedsChannel)
  .transform((body) => ({ dryRun: body.dry_run, filter: toFilter(body) }));

/** `POST /api/v1/events/replay`: the list's filters as a JSON body, and `dry_run`. */
export function parseReplayBody(body: unknown): { dryRun: boolean; filter: EventFilter } {
  const input = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
  const { conditions, rest } = takePayloadConditions(input as Record<string, unknown>);
  const parsed = replayBodySchema.parse(rest);
  return { dryRun: parsed.dryRun, filter: { ...parsed.filter, payload: conditions } };
}

import { z } from 'zod';
import { isStorableTime } from '../db/sql.js';
import { AppError } from '../platform/errors.js';
import { rowId } from '../platform/ids.js';

export const AUDIT_PAGE_SIZE = 50;
export const MAX_AUDIT_PAGE_SIZE = 200;

/** The filter of the audit log, shared by the API, its export and the panel page. */
export interface AuditQuery {
  action?: string | undefined;
  actorId?: string | undefined;
  targetKind?: string | undefined;
  targetId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  limit: number;
  /** The id the page before ended at. */
  cursor?: string | undefined;
}

/** An ISO 8601 instant (with Z or an offset) or a date, which means its midnight UTC. */
const instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text))
  .refine(isStorableTime, 'must be between years 1 and 9999');

const text = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

const filterFields = {
  action: text.optional(),
  actor_id: text.optional(),
  target_kind: text.optional(),
  target_id: text.optional(),
  from: instant.optional(),
  to: instant.optional(),
};

const limit = z
  .string()
  .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${MAX_AUDIT_PAGE_SIZE}`)
  .transform(Number)
  .pipe(
    z
      .number()
      .min(1, 'must be at least 1')
      .max(MAX_AUDIT_PAGE_SIZE, `must be at most ${MAX_AUDIT_PAGE_SIZE}`),
  );

export const invalidAuditCursor = () =>
  new AppError(
    400,
    'invalid_cursor',
    'Invalid cursor',
    'The cursor is not one this API gave out; start again without it.',
  );

/** Opaque to clients: base64url of the last entry's id. */
export const encodeAuditCursor = (id: string): string =>
  Buffer.from(JSON.stringify({ i: id })).toString('base64url');

function decodeAuditCursor(cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    const id = rowId().safeParse((parsed as { i?: unknown } | null)?.i);
    if (id.success) return id.data;
  } catch {
    // not JSON: refused below like any other cursor not made here
  }
  throw invalidAuditCursor();
}

const listQuerySchema = z
  .strictObject({
    ...filterFields,
    limit: limit.optional(),
    cursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,200}$/)
      .optional(),
  })
  .transform((query): AuditQuery => ({
    action: query.action,
    actorId: query.actor_id,
    targetKind: query.target_kind,
    targetId: query.target_id,
    from: query.from,
    to: query.to,
    limit: query.limit ?? AUDIT_PAGE_SIZE,
    cursor: query.cursor === undefined ? undefined : decodeAuditCursor(query.cursor),
  }));

/** `GET /api/v1/audit`; a parameter given twice, or not listed here, is a 400. */
export const parseAuditQuery = (query: unknown): AuditQuery => listQuerySchema.parse(query);

/** `GET /api/v1/audit/export`: the list's filter, every entry. */
export const parseAuditExportQuery = (query: unknown): AuditQuery => ({
  ...z
    .strictObject(filterFields)
    .transform((q) => ({
      action: q.action,
      actorId: q.actor_id,
      targetKind: q.target_kind,
      targetId: q.target_id,
      from: q.from,
      to: q.to,
    }))
    .parse(query),
  limit: MAX_AUDIT_PAGE_SIZE,
});

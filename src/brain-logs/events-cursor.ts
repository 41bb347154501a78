import { z } from 'zod';
import { AppError } from '../platform/errors.js';
import { rowId } from '../platform/ids.js';

/**
 * Where a Brain Logs page ends: the (received_at, id) of its last event. `receivedAt` is the
 * database's text with microseconds, not a JS Date (milliseconds), because rounding it would
 * make the next page skip or repeat events received within the same millisecond.
 */
export interface EventCursor {
  receivedAt: string;
  id: string;
}

const EXACT_TIME = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const cursorSchema = z.strictObject({
  t: z.string().regex(EXACT_TIME),
  i: rowId(),
});

export const invalidCursor = () =>
  new AppError(
    400,
    'invalid_cursor',
    'Invalid cursor',
    'The cursor is not one this API gave out; start again without it.',
  );

/** Opaque to clients: base64url of a small JSON object. */
export function encodeCursor(cursor: EventCursor): string {
  return Buffer.from(JSON.stringify({ t: cursor.receivedAt, i: cursor.id })).toString('base64url');
}

/** @throws AppError 400 `invalid_cursor` for anything `encodeCursor` did not make. */
export function decodeCursor(text: string): EventCursor {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const result = cursorSchema.safeParse(parsed);
  if (!result.success || !isRealTime(result.data.t)) throw invalidCursor();
  return { receivedAt: result.data.t, id: result.data.i };
}

/** Rejects what the regex lets through but PostgreSQL would refuse (month 13, February 30, year 0). */
function isRealTime(text: string): boolean {
  const millis = `${text.slice(0, 23)}Z`;
  const date = new Date(millis);
  return (
    !Number.isNaN(date.getTime()) && date.getUTCFullYear() >= 1 && date.toISOString() === millis
  );
}

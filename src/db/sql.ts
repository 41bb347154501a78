/** The first instant (UTC) of the current calendar month: the start of a quota period. */
export const CURRENT_MONTH_START = `(date_trunc('month', now() at time zone 'utc') at time zone 'utc')`;

/**
 * A text[] as PostgreSQL's array literal, `{"a","b\"c"}`, for a statement that takes one list
 * per event: unnest cannot take an array of arrays of different lengths, and JSON is no way
 * around it (PostgreSQL's JSON refuses the lone surrogates a payload may hold).
 */
export function textArrayLiteral(items: readonly string[]): string {
  return `{${items.map((item) => `"${item.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}

/** What PostgreSQL timestamptz and an ISO 8601 string can both hold. */
export function isStorableTime(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
}

/** A statement refused by a unique constraint or index (SQLSTATE 23505), on both databases. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown })?.code === '23505';
}

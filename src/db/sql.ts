/** The first instant (UTC) of the current calendar month: the start of a quota period. */
export const CURRENT_MONTH_START = `(date_trunc('month', now() at time zone 'utc') at time zone 'utc')`;

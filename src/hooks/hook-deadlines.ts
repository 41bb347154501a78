/**
 * How long the receiver's steps may take, so that a webhook is answered within 10 s of its body
 * arriving whatever PostgreSQL or Redis are doing (hung, paused, unreachable, a lock held):
 *
 * - each rate limit asks Redis for at most 500 ms, then lets the request through (src/platform/redis.ts);
 * - finding the channel ends `lookupMs` after the request began (both rate limits included);
 * - storing the event (or the refused request) ends `storeMs` after its body was read, plus the
 *   database client's grace of 0.5 s (src/db/postgres.ts); an event not committed by then is
 *   answered 503 and never committed later.
 *
 * 3 (first rate limit and lookup) + 0.5 + 5 + 0.5 = 9 s: a second to spare.
 */
export const HOOK_DEADLINES = {
  lookupMs: 3_000,
  storeMs: 5_000,
} as const;

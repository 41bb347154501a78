import type { Queryable } from '../db/database.js';

/**
 * Ends messages to destinations that are not to be sent (their `when` does not hold, or their
 * message renders empty) as `skipped`, without an attempt, one statement for a whole claim.
 * Only the lease owner writes; `why` is shown as the message's `last_error`.
 */
export async function skipMessages(
  db: Queryable,
  workerId: string,
  skipped: { id: string; why: string }[],
): Promise<void> {
  if (skipped.length === 0) return;
  await db.query(
    `update deliveries set state = 'skipped', last_error = skip.why, locked_by = null,
       locked_until = null
     from unnest($2::bigint[], $3::text[]) as skip(id, why)
     where deliveries.id = skip.id and deliveries.locked_by = $1 and deliveries.state = 'sending'`,
    [workerId, skipped.map((s) => s.id), skipped.map((s) => s.why)],
  );
}

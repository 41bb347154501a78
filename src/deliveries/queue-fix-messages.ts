import type { Queryable } from '../db/database.js';

/**
 * Stores the bodies of messages about to be sent for the first time, one statement for a
 * whole claim. A body already stored is kept (`message is null`): every attempt of a message,
 * after a crash too, sends the same bytes. Only the lease owner writes. Resolves to the body
 * each delivery is to send.
 */
export async function fixMessages(
  db: Queryable,
  workerId: string,
  messages: { id: string; message: string }[],
): Promise<Map<string, string>> {
  if (messages.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; message: string }>(
    `update deliveries set message = coalesce(deliveries.message, fixed.message)
     from unnest($2::bigint[], $3::text[]) as fixed(id, message)
     where deliveries.id = fixed.id and deliveries.locked_by = $1
     returning deliveries.id, deliveries.message`,
    [workerId, messages.map((m) => m.id), messages.map((m) => m.message)],
    { name: 'fix-messages' },
  );
  return new Map(rows.map((row) => [row.id, row.message]));
}

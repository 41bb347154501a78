import type { Queryable } from '../db/database.js';

/**
 * What the model answered when its reply was refused as `reply_invalid` (migrations/0032), for
 * Brain Logs only: the API's event object and the exports keep the contract's shape.
 */
export async function rejectedReplyOf(
  db: Queryable,
  workspaceId: string,
  eventId: string,
): Promise<string | null> {
  const { rows } = await db.query<{ rejected_reply: string | null }>(
    'select rejected_reply from events where id = $1 and workspace_id = $2',
    [eventId, workspaceId],
  );
  return rows[0]?.rejected_reply ?? null;
}

import type { Queryable } from '../db/database.js';

/**
 * The detail a refused sender was answered with (migrations/0029), for Brain Logs only: the API's
 * event object keeps the refusal's code in `error`, as the contract has it.
 */
export async function refusalDetailOf(
  db: Queryable,
  workspaceId: string,
  eventId: string,
): Promise<string | null> {
  const { rows } = await db.query<{ refusal_detail: string | null }>(
    'select refusal_detail from events where id = $1 and workspace_id = $2',
    [eventId, workspaceId],
  );
  return rows[0]?.refusal_detail ?? null;
}

import type { Queryable } from '../db/database.js';

/** The event's status, its row locked until the transaction ends; undefined: not the workspace's. */
export async function lockEventStatus(
  db: Queryable,
  workspaceId: string,
  eventId: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ status: string }>(
    `select status from events where workspace_id = $1 and id = $2 for update`,
    [workspaceId, eventId],
  );
  return rows[0]?.status;
}

/** Events whose wait for a decision has run out, oldest first (the partial index of 0057). */
export async function listExpiredApprovals(
  db: Queryable,
  limit: number,
): Promise<{ id: string; workspace_id: string }[]> {
  const { rows } = await db.query<{ id: string; workspace_id: string }>(
    `select id, workspace_id from events
     where status = 'awaiting_approval' and approval_expires_at <= now()
     order by approval_expires_at, id
     limit $1`,
    [limit],
  );
  return rows;
}

import type { Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';

export interface ReceivingChannel {
  id: string;
  workspace_id: string;
  enabled: boolean;
}

export async function findReceivingChannel(db: Queryable, tokenHash: string): Promise<ReceivingChannel | undefined> {
  const { rows } = await db.query<ReceivingChannel>(
    `select id, workspace_id, enabled from channels
     where webhook_token_hash = $1 and deleted_at is null`,
    [tokenHash],
  );
  return rows[0];
}

/**
 * Uses one chat of the workspace quota and stores the event, in one statement. The update
 * locks the workspace row and PostgreSQL re-checks the quota condition on the locked row, so
 * concurrent requests (from any number of instances) can never accept past the quota. A month
 * that has begun since the last accepted event starts the count again at 1.
 * Returns the event id, or undefined when the quota is used up.
 */
export async function insertAcceptedEvent(
  db: Queryable,
  channel: ReceivingChannel,
  payload: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `with chat as (
       update workspaces set
         chats_used = case when quota_period_start < ${CURRENT_MONTH_START} then 1 else chats_used + 1 end,
         quota_period_start = ${CURRENT_MONTH_START}
       where id = $1
         and (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end) < chat_quota
       returning id
     )
     insert into events (workspace_id, channel_id, status, payload)
     select chat.id, $2, 'pending', $3 from chat
     returning id`,
    [channel.workspace_id, channel.id, payload],
  );
  return rows[0]?.id;
}

/** A refused request, kept so admins can see why a sender fails. It uses no quota. */
export async function insertRejectedEvent(
  db: Queryable,
  channel: ReceivingChannel,
  payload: string,
  code: string,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into events (workspace_id, channel_id, status, payload, error, completed_at)
     values ($1, $2, 'rejected', $3, $4, now())
     returning id`,
    [channel.workspace_id, channel.id, payload, code],
  );
  return (rows[0] as { id: string }).id;
}

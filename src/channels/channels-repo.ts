import type { Queryable } from '../db/database.js';

export interface ChannelRow {
  id: string;
  workspace_id: string;
  name: string;
  template: string;
  enabled: boolean;
  webhook_token: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, workspace_id, name, template, enabled, webhook_token, created_at, updated_at';

export interface NewChannel {
  workspaceId: string;
  name: string;
  template: string;
  enabled: boolean;
  token: string;
  tokenHash: string;
}

export async function insertChannel(db: Queryable, channel: NewChannel): Promise<ChannelRow> {
  const { rows } = await db.query<ChannelRow>(
    `insert into channels (workspace_id, name, template, enabled, webhook_token, webhook_token_hash)
     values ($1, $2, $3, $4, $5, $6) returning ${COLUMNS}`,
    [
      channel.workspaceId,
      channel.name,
      channel.template,
      channel.enabled,
      channel.token,
      channel.tokenHash,
    ],
  );
  return rows[0] as ChannelRow;
}

export async function listChannels(db: Queryable, workspaceId: string): Promise<ChannelRow[]> {
  const { rows } = await db.query<ChannelRow>(
    `select ${COLUMNS} from channels where workspace_id = $1 and deleted_at is null
     order by created_at, id`,
    [workspaceId],
  );
  return rows;
}

export async function findChannel(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<ChannelRow | undefined> {
  const { rows } = await db.query<ChannelRow>(
    `select ${COLUMNS} from channels where workspace_id = $1 and id = $2 and deleted_at is null`,
    [workspaceId, id],
  );
  return rows[0];
}

export interface ChannelChanges {
  name?: string;
  template?: string;
  enabled?: boolean;
}

export async function updateChannel(
  db: Queryable,
  workspaceId: string,
  id: string,
  changes: ChannelChanges,
): Promise<ChannelRow | undefined> {
  const { rows } = await db.query<ChannelRow>(
    `update channels set
       name = coalesce($3, name),
       template = coalesce($4, template),
       enabled = coalesce($5, enabled),
       updated_at = now()
     where workspace_id = $1 and id = $2 and deleted_at is null
     returning ${COLUMNS}`,
    [workspaceId, id, changes.name ?? null, changes.template ?? null, changes.enabled ?? null],
  );
  return rows[0];
}

export async function replaceWebhookToken(
  db: Queryable,
  workspaceId: string,
  id: string,
  token: string,
  tokenHash: string,
): Promise<ChannelRow | undefined> {
  const { rows } = await db.query<ChannelRow>(
    `update channels set webhook_token = $3, webhook_token_hash = $4, updated_at = now()
     where workspace_id = $1 and id = $2 and deleted_at is null
     returning ${COLUMNS}`,
    [workspaceId, id, token, tokenHash],
  );
  return rows[0];
}

/** Deleted channels keep their row so that their events stay readable in Brain Logs. */
export async function markChannelDeleted(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update channels set deleted_at = now(), enabled = false, updated_at = now()
     where workspace_id = $1 and id = $2 and deleted_at is null`,
    [workspaceId, id],
  );
  return rowCount > 0;
}

import type { Queryable } from '../db/database.js';
import type { Role } from '../platform/roles.js';

export interface ApiKeyRow {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, name, role, prefix, created_at, last_used_at, revoked_at';

export interface NewApiKey {
  workspaceId: string;
  name: string;
  role: Role;
  prefix: string;
  keyHash: string;
}

export async function insertApiKey(db: Queryable, key: NewApiKey): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `insert into api_keys (workspace_id, name, role, prefix, key_hash) values ($1, $2, $3, $4, $5)
     returning ${COLUMNS}`,
    [key.workspaceId, key.name, key.role, key.prefix, key.keyHash],
  );
  return rows[0] as ApiKeyRow;
}

/** Live keys first, newest first; revoked ones stay listed so admins can tell what happened. */
export async function listApiKeys(db: Queryable, workspaceId: string): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `select ${COLUMNS} from api_keys where workspace_id = $1
     order by revoked_at is not null, created_at desc, id desc`,
    [workspaceId],
  );
  return rows;
}

export async function revokeApiKey(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update api_keys set revoked_at = coalesce(revoked_at, now())
     where workspace_id = $1 and id = $2`,
    [workspaceId, id],
  );
  return rowCount > 0;
}

/** The workspace a live key manages and its role there (marking the key used), or undefined. */
export async function useApiKey(
  db: Queryable,
  keyHash: string,
): Promise<{ id: string; name: string; workspace_id: string; role: Role } | undefined> {
  const { rows } = await db.query<{ id: string; name: string; workspace_id: string; role: Role }>(
    `update api_keys set last_used_at = now()
     where key_hash = $1 and revoked_at is null
     returning id::text, name, workspace_id, role`,
    [keyHash],
  );
  return rows[0];
}

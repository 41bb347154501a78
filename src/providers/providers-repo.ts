import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { ProviderKind } from './provider-kinds.js';

export interface ProviderRow {
  id: string;
  workspace_id: string;
  name: string;
  kind: ProviderKind;
  base_url: string | null;
  api_key_set: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A provider as the worker calls it: with its API key. */
export interface ProviderWithKey extends ProviderRow {
  api_key: string | null;
}

const COLUMNS = `id, workspace_id, name, kind, base_url, api_key is not null as api_key_set,
  created_at, updated_at`;

export async function listProviders(db: Queryable, workspaceId: string): Promise<ProviderRow[]> {
  const { rows } = await db.query<ProviderRow>(
    `select ${COLUMNS} from providers where workspace_id = $1 order by name`,
    [workspaceId],
  );
  return rows;
}

export async function findProvider(
  db: Queryable,
  workspaceId: string,
  id: string,
  { forUpdate = false } = {},
): Promise<ProviderRow | undefined> {
  const { rows } = await db.query<ProviderRow>(
    `select ${COLUMNS} from providers where workspace_id = $1 and id = $2
     ${forUpdate ? 'for update' : ''}`,
    [workspaceId, id],
  );
  return rows[0];
}

/**
 * The providers of a workspace with their keys, opened: the one statement that reads `api_key`.
 * `id` narrows it to one provider.
 */
export async function providersWithKeys(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id?: string,
): Promise<ProviderWithKey[]> {
  const { rows } = await db.query<ProviderWithKey>(
    `select ${COLUMNS}, api_key from providers
     where workspace_id = $1 and ($2::bigint is null or id = $2::bigint)`,
    [workspaceId, id ?? null],
  );
  return rows.map((row) => ({ ...row, api_key: secrets.open(row.api_key) }));
}

/** The one statement that writes `api_key`, sealed: a key, or null to clear it. */
export async function writeApiKey(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
  apiKey: string | null,
): Promise<void> {
  await db.query(
    `update providers set api_key = $3, updated_at = now() where workspace_id = $1 and id = $2`,
    [workspaceId, id, secrets.seal(apiKey)],
  );
}

/** Undefined when the workspace already has a provider of that name. */
export async function insertProvider(
  db: Queryable,
  provider: { workspaceId: string; name: string; kind: ProviderKind; baseUrl: string | null },
): Promise<ProviderRow | undefined> {
  const { rows } = await db.query<ProviderRow>(
    `insert into providers (workspace_id, name, kind, base_url) values ($1, $2, $3, $4)
     on conflict (workspace_id, name) do nothing
     returning ${COLUMNS}`,
    [provider.workspaceId, provider.name, provider.kind, provider.baseUrl],
  );
  return rows[0];
}

/** A member undefined keeps the stored value; `baseUrl` null clears it. */
export async function updateProvider(
  db: Queryable,
  workspaceId: string,
  id: string,
  changes: { name?: string; kind?: ProviderKind; baseUrl?: string | null },
): Promise<ProviderRow | undefined> {
  const { rows } = await db.query<ProviderRow>(
    `update providers set
       name = coalesce($3, name),
       kind = coalesce($4, kind),
       base_url = case when $5::boolean then $6::text else base_url end,
       updated_at = now()
     where workspace_id = $1 and id = $2
     returning ${COLUMNS}`,
    [
      workspaceId,
      id,
      changes.name ?? null,
      changes.kind ?? null,
      changes.baseUrl !== undefined,
      changes.baseUrl ?? null,
    ],
  );
  return rows[0];
}

export async function deleteProvider(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const { rowCount } = await db.query(`delete from providers where workspace_id = $1 and id = $2`, [
    workspaceId,
    id,
  ]);
  return rowCount > 0;
}

/**
 * Which of `names` the workspace has, each row locked against deletion and renaming until the
 * caller's transaction ends: a channel saved naming a provider cannot race its deletion.
 */
export async function lockProviderNames(
  db: Queryable,
  workspaceId: string,
  names: readonly string[],
): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `select name from providers where workspace_id = $1 and name = any($2::text[]) for share`,
    [workspaceId, names],
  );
  return new Set(rows.map((row) => row.name));
}

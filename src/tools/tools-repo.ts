import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { storedForm } from '../secrets/secret-values.js';
import type { ToolKind, ToolMethod } from './tool-schemas.js';

/** A tool as stored, its secrets opened: its URL whole and its headers with their values. */
export interface ToolRow {
  id: string;
  workspace_id: string;
  name: string;
  kind: ToolKind;
  description: string;
  approval: 'never' | 'always';
  safe_in_trials: boolean;
  timeout_ms: number;
  headers: Record<string, string>;
  url: string;
  method: ToolMethod | null;
  input_schema: Record<string, unknown> | null;
  allowed_tools: string[] | null;
  created_at: Date;
  updated_at: Date;
}

type StoredRow = Omit<ToolRow, 'headers'> & { headers: string | null };

/** The members a write sets; `headers` null clears them. */
export interface ToolWrite {
  name?: string;
  kind?: ToolKind;
  description?: string;
  approval?: 'never' | 'always';
  safe_in_trials?: boolean;
  timeout_ms?: number;
  headers?: Record<string, string> | null;
  url?: string;
  method?: ToolMethod;
  input_schema?: Record<string, unknown>;
  allowed_tools?: string[];
}

const COLUMNS = `id, workspace_id, name, kind, description, approval, safe_in_trials, timeout_ms,
  headers, url, method, input_schema, allowed_tools, created_at, updated_at`;

/** The sealed forms of a write's secrets: headers sealed whole, the URL when it holds any. */
function sealed(secrets: SecretBox, write: ToolWrite) {
  return {
    headers:
      write.headers === undefined
        ? undefined
        : write.headers === null || Object.keys(write.headers).length === 0
          ? null
          : secrets.seal(JSON.stringify(write.headers)),
    url: write.url === undefined ? undefined : storedForm(secrets, 'url', write.url),
  };
}

function opened(secrets: SecretBox, row: StoredRow): ToolRow {
  const headers = secrets.open(row.headers);
  return {
    ...row,
    headers: headers ? (JSON.parse(headers) as Record<string, string>) : {},
    url: secrets.open(row.url),
  };
}

export async function listTools(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
): Promise<ToolRow[]> {
  const { rows } = await db.query<StoredRow>(
    `select ${COLUMNS} from tools where workspace_id = $1 order by name`,
    [workspaceId],
  );
  return rows.map((row) => opened(secrets, row));
}

export async function findTool(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
  { forUpdate = false } = {},
): Promise<ToolRow | undefined> {
  const { rows } = await db.query<StoredRow>(
    `select ${COLUMNS} from tools where workspace_id = $1 and id = $2
     ${forUpdate ? 'for update' : ''}`,
    [workspaceId, id],
  );
  return rows[0] && opened(secrets, rows[0]);
}

/** Undefined when the workspace already has a tool of that name. */
export async function insertTool(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  tool: ToolWrite & Required<Pick<ToolWrite, 'name' | 'kind' | 'description' | 'url'>>,
): Promise<ToolRow | undefined> {
  const secret = sealed(secrets, tool);
  const { rows } = await db.query<StoredRow>(
    `insert into tools (workspace_id, name, kind, description, approval, safe_in_trials,
       timeout_ms, headers, url, method, input_schema, allowed_tools)
     values ($1, $2, $3, $4, coalesce($5, 'never'), coalesce($6, false), coalesce($7, 10000),
       $8, $9, $10, $11, $12)
     on conflict (workspace_id, name) do nothing
     returning ${COLUMNS}`,
    [
      workspaceId,
      tool.name,
      tool.kind,
      tool.description,
      tool.approval ?? null,
      tool.safe_in_trials ?? null,
      tool.timeout_ms ?? null,
      secret.headers ?? null,
      secret.url,
      tool.method ?? null,
      tool.input_schema ? JSON.stringify(tool.input_schema) : null,
      tool.allowed_tools ?? null,
    ],
  );
  return rows[0] && opened(secrets, rows[0]);
}

/** A member undefined keeps the stored value; `headers` null clears them. */
export async function updateTool(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
  changes: ToolWrite,
): Promise<ToolRow | undefined> {
  const secret = sealed(secrets, changes);
  const { rows } = await db.query<StoredRow>(
    `update tools set
       name = coalesce($3, name),
       description = coalesce($4, description),
       approval = coalesce($5, approval),
       safe_in_trials = coalesce($6, safe_in_trials),
       timeout_ms = coalesce($7, timeout_ms),
       headers = case when $8::boolean then $9::text else headers end,
       url = coalesce($10, url),
       method = coalesce($11, method),
       input_schema = coalesce($12::jsonb, input_schema),
       allowed_tools = coalesce($13::text[], allowed_tools),
       updated_at = now()
     where workspace_id = $1 and id = $2
     returning ${COLUMNS}`,
    [
      workspaceId,
      id,
      changes.name ?? null,
      changes.description ?? null,
      changes.approval ?? null,
      changes.safe_in_trials ?? null,
      changes.timeout_ms ?? null,
      secret.headers !== undefined,
      secret.headers ?? null,
      secret.url ?? null,
      changes.method ?? null,
      changes.input_schema ? JSON.stringify(changes.input_schema) : null,
      changes.allowed_tools ?? null,
    ],
  );
  return rows[0] && opened(secrets, rows[0]);
}

export async function deleteTool(db: Queryable, workspaceId: string, id: string): Promise<void> {
  await db.query(`delete from tools where workspace_id = $1 and id = $2`, [workspaceId, id]);
}

/**
 * Which of `names` the workspace has, each row locked against deletion and renaming until the
 * caller's transaction ends: a channel saved naming a tool cannot race its deletion.
 */
export async function lockToolNames(
  db: Queryable,
  workspaceId: string,
  names: readonly string[],
): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `select name from tools where workspace_id = $1 and name = any($2::text[]) for share`,
    [workspaceId, names],
  );
  return new Set(rows.map((row) => row.name));
}

/** The workspace's tools of these names (a channel's `ai.tools`), their secrets opened. */
export async function findToolsByName(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  names: readonly string[],
): Promise<ToolRow[]> {
  const { rows } = await db.query<StoredRow>(
    `select ${COLUMNS} from tools where workspace_id = $1 and name = any($2::text[])`,
    [workspaceId, names],
  );
  return rows.map((row) => opened(secrets, row));
}

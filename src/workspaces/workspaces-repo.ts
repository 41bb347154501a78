import type { Queryable } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';
import { BUDGET_RESETS_AT, spentThisMonth } from '../spend/budget-sql.js';

export interface WorkspaceRow {
  id: string;
  name: string;
  chat_quota: number;
  chats_used: number;
  quota_resets_at: Date;
  monthly_budget_usd: number | null;
  spent_usd: number;
  budget_resets_at: Date;
}

// Usage recorded in an earlier month counts as 0: the quota starts again when a month begins,
// without a job having to reset anything.
const WORKSPACE_COLUMNS = `id, name, chat_quota,
  case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end as chats_used,
  (${CURRENT_MONTH_START} + interval '1 month') as quota_resets_at,
  monthly_budget_usd::float8 as monthly_budget_usd,
  ${spentThisMonth('workspaces')}::float8 as spent_usd,
  ${BUDGET_RESETS_AT} as budget_resets_at`;

export async function ensureDefaultWorkspace(
  db: Queryable,
  chatQuota: number,
): Promise<WorkspaceRow> {
  await db.query(
    `insert into workspaces (name, is_default, chat_quota) values ('Default workspace', true, $1)
     on conflict (is_default) where is_default do nothing`,
    [chatQuota],
  );
  const { rows } = await db.query<WorkspaceRow>(
    `select ${WORKSPACE_COLUMNS} from workspaces where is_default`,
  );
  return rows[0] as WorkspaceRow;
}

export async function insertWorkspace(
  db: Queryable,
  name: string,
  chatQuota: number,
): Promise<WorkspaceRow> {
  const { rows } = await db.query<WorkspaceRow>(
    `insert into workspaces (name, chat_quota) values ($1, $2) returning ${WORKSPACE_COLUMNS}`,
    [name, chatQuota],
  );
  return rows[0] as WorkspaceRow;
}

export async function findWorkspace(db: Queryable, id: string): Promise<WorkspaceRow | undefined> {
  const { rows } = await db.query<WorkspaceRow>(
    `select ${WORKSPACE_COLUMNS} from workspaces where id = $1`,
    [id],
  );
  return rows[0];
}

export interface WorkspaceChanges {
  name?: string;
  chatQuota?: number;
  resetUsage?: boolean;
  /** A number sets the budget, null removes it, undefined keeps it. */
  monthlyBudgetUsd?: number | null;
}

export async function updateWorkspace(
  db: Queryable,
  id: string,
  changes: WorkspaceChanges,
): Promise<WorkspaceRow | undefined> {
  const { rows } = await db.query<WorkspaceRow>(
    `update workspaces set
       name = coalesce($2, name),
       chat_quota = coalesce($3, chat_quota),
       chats_used = case when $4 then 0 else chats_used end,
       quota_period_start = case when $4 then ${CURRENT_MONTH_START} else quota_period_start end,
       monthly_budget_usd = case when $5 then $6::numeric else monthly_budget_usd end,
       updated_at = now()
     where id = $1
     returning ${WORKSPACE_COLUMNS}`,
    [
      id,
      changes.name ?? null,
      changes.chatQuota ?? null,
      changes.resetUsage === true,
      changes.monthlyBudgetUsd !== undefined,
      changes.monthlyBudgetUsd ?? null,
    ],
  );
  return rows[0];
}

/**
 * Uses `chats` of the workspace's quota this month, or none when fewer are left; says which.
 * One statement: the row lock it takes orders it with the receiver's, so nothing is spent twice.
 */
export async function takeChats(db: Queryable, id: string, chats: number): Promise<boolean> {
  const used = `(case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end)`;
  const { rowCount } = await db.query(
    `update workspaces set
       chats_used = ${used} + $2,
       quota_period_start = ${CURRENT_MONTH_START}
     where id = $1 and chat_quota - ${used} >= $2`,
    [id, chats],
  );
  return rowCount === 1;
}

/**
 * How many rows of `table` (one of workspace-limits.ts, never a caller's text) the workspace
 * holds, after taking the transaction-scoped lock of that count: creates in that table wait for
 * each other until their transactions end.
 */
export async function lockAndCount(
  tx: Queryable,
  workspaceId: string,
  table: string,
): Promise<number> {
  await tx.query(`select pg_advisory_xact_lock(hashtext('hookprompt:count:' || $2 || ':' || $1))`, [
    workspaceId,
    table,
  ]);
  const { rows } = await tx.query<{ count: number }>(
    `select count(*)::int as count from ${table} where workspace_id = $1`,
    [workspaceId],
  );
  return rows[0]?.count ?? 0;
}

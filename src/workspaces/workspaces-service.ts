import { changesBetween, recordAudit } from '../audit/record-audit.js';
import type { Database, Queryable } from '../db/database.js';
import { notFound } from '../platform/errors.js';
import * as repo from './workspaces-repo.js';
import type { WorkspacePatch } from './workspaces-schemas.js';

export interface Workspace {
  id: string;
  name: string;
  chat_quota: number;
  chats_used: number;
  quota_resets_at: string;
  /** Null: no budget. */
  monthly_budget_usd: number | null;
  /** What every AI call of the workspace cost this UTC month, trials included. */
  spent_usd: number;
  budget_resets_at: string;
}

function toWorkspace(row: repo.WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    chat_quota: row.chat_quota,
    chats_used: row.chats_used,
    quota_resets_at: new Date(row.quota_resets_at).toISOString(),
    monthly_budget_usd: row.monthly_budget_usd,
    spent_usd: row.spent_usd,
    budget_resets_at: new Date(row.budget_resets_at).toISOString(),
  };
}

export class WorkspacesService {
  constructor(private readonly db: Database) {}

  async get(id: string): Promise<Workspace> {
    const row = await repo.findWorkspace(this.db, id);
    if (!row) throw notFound('This workspace');
    return toWorkspace(row);
  }

  async update(id: string, patch: WorkspacePatch): Promise<Workspace> {
    const row = await this.db.transaction(async (tx) => {
      const before = await repo.findWorkspace(tx, id);
      const after = await repo.updateWorkspace(tx, id, {
        name: patch.name,
        chatQuota: patch.chat_quota,
        resetUsage: patch.chats_used === 0,
        monthlyBudgetUsd: patch.monthly_budget_usd,
      });
      if (!before || !after) throw notFound('This workspace');
      const members = Object.keys(patch).filter(
        (member) => patch[member as keyof WorkspacePatch] !== undefined,
      );
      await recordAudit(tx, {
        workspaceId: id,
        action: 'workspace.update',
        target: { kind: 'workspace', id },
        changes: changesBetween(toWorkspace(before), toWorkspace(after), members),
      });
      return after;
    });
    return toWorkspace(row);
  }

  /** A new workspace (on `db`, e.g. the caller's transaction). */
  async create(name: string, chatQuota: number, db: Queryable = this.db): Promise<Workspace> {
    return toWorkspace(await repo.insertWorkspace(db, name, chatQuota));
  }

  /**
   * Uses `chats` of this month's quota (on `db`, e.g. the caller's transaction), or none.
   * @returns false when fewer than `chats` are left.
   */
  async takeChats(id: string, chats: number, db: Queryable = this.db): Promise<boolean> {
    return chats === 0 || repo.takeChats(db, id, chats);
  }

  async ensureDefault(chatQuota: number): Promise<Workspace> {
    return toWorkspace(await repo.ensureDefaultWorkspace(this.db, chatQuota));
  }
}

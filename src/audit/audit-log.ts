import type { Writable } from 'node:stream';
import type { Queryable } from '../db/database.js';
import { room } from '../platform/writable-room.js';
import type { AuditActor } from './audit-context.js';
import { listAuditEntries, type AuditRow } from './audit-repo.js';
import { encodeAuditCursor, type AuditQuery } from './audit-schemas.js';

/** An entry as the API shows it. */
export interface AuditEntryJson {
  id: string;
  at: string;
  workspace_id: string;
  actor: AuditActor;
  action: string;
  target: { kind: string; id: string | null };
  changes: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
}

export const toAuditEntryJson = (row: AuditRow): AuditEntryJson => ({
  id: row.id,
  at: new Date(row.at).toISOString(),
  workspace_id: row.workspace_id,
  actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_name },
  action: row.action,
  target: { kind: row.target_kind, id: row.target_id },
  changes: row.changes,
  ip: row.ip,
  user_agent: row.user_agent,
});

/** Reading the audit log (writing is `recordAudit`, in each change's own transaction). */
export class AuditLog {
  constructor(private readonly db: Queryable) {}

  /** One page of a workspace's entries, newest first; `next_cursor` null on the last. */
  async list(
    workspaceId: string,
    query: AuditQuery,
  ): Promise<{ data: AuditEntryJson[]; next_cursor: string | null }> {
    const rows = await listAuditEntries(
      this.db,
      { ...query, workspaceId, beforeId: query.cursor },
      query.limit + 1,
    );
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toAuditEntryJson),
      next_cursor: rows.length > query.limit && last ? encodeAuditCursor(last.id) : null,
    };
  }

  /**
   * Writes every entry of the filter to `out` as JSON Lines, newest first, a page at a time,
   * waiting whenever `out` is full; resolves once all are written (the caller ends `out`).
   */
  async export(workspaceId: string, query: AuditQuery, out: Writable): Promise<number> {
    let count = 0;
    let beforeId = query.cursor;
    for (;;) {
      const rows = await listAuditEntries(
        this.db,
        { ...query, workspaceId, beforeId },
        query.limit,
      );
      for (const row of rows) {
        if (out.destroyed) return count;
        if (!out.write(`${JSON.stringify(toAuditEntryJson(row))}\n`)) await room(out);
        count++;
      }
      const last = rows[rows.length - 1];
      if (!last || rows.length < query.limit) return count;
      beforeId = last.id;
    }
  }
}

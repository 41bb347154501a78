import type { Queryable } from '../db/database.js';
import type { AuditQuery } from './audit-schemas.js';

export interface AuditRow {
  id: string;
  at: Date;
  workspace_id: string;
  actor_kind: 'admin' | 'api_key' | 'system';
  actor_id: string | null;
  actor_name: string;
  action: string;
  target_kind: string;
  target_id: string | null;
  changes: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
}

export type NewAuditRow = Omit<AuditRow, 'id' | 'at'>;

/** Appends entries, one per workspace (a failed sign-in is recorded in each of the admin's). */
export async function insertAuditEntries(db: Queryable, rows: NewAuditRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into audit_entries (workspace_id, actor_kind, actor_id, actor_name, action,
       target_kind, target_id, changes, ip, user_agent)
     select * from jsonb_to_recordset($1::jsonb) as e(workspace_id bigint, actor_kind text,
       actor_id text, actor_name text, action text, target_kind text, target_id text,
       changes jsonb, ip text, user_agent text)`,
    [JSON.stringify(rows)],
  );
}

/** The audit log's filter (audit-schemas.ts) in one workspace, from before an entry's id. */
export type AuditFilter = Omit<AuditQuery, 'limit' | 'cursor'> & {
  workspaceId: string;
  /** Entries older than this id (the page before ended there). */
  beforeId?: string | undefined;
};

/** A filter's entries, newest first (ids grow with time), at most `limit`. */
export async function listAuditEntries(
  db: Queryable,
  filter: AuditFilter,
  limit: number,
): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditRow>(
    `select id::text, at, workspace_id::text, actor_kind, actor_id, actor_name, action,
            target_kind, target_id, changes, ip, user_agent
       from audit_entries
      where workspace_id = $1
        and ($2::text is null or action = $2)
        and ($3::text is null or actor_id = $3)
        and ($4::text is null or target_kind = $4)
        and ($5::text is null or target_id = $5)
        and ($6::timestamptz is null or at >= $6)
        and ($7::timestamptz is null or at < $7)
        and ($8::bigint is null or id < $8)
      order by audit_entries.id desc
      limit $9`,
    [
      filter.workspaceId,
      filter.action ?? null,
      filter.actorId ?? null,
      filter.targetKind ?? null,
      filter.targetId ?? null,
      filter.from ?? null,
      filter.to ?? null,
      filter.beforeId ?? null,
      limit,
    ],
  );
  return rows;
}

/**
 * Deletes up to `batchSize` entries older than `days` days, in a transaction of its own (`tx`):
 * the setting names the retention to the table's trigger, which refuses every other delete.
 */
export async function deleteExpiredAuditEntries(
  tx: Queryable,
  days: number,
  batchSize: number,
): Promise<number> {
  await tx.query(`select set_config('hookprompt.audit_retention_days', $1, true)`, [String(days)]);
  const { rowCount } = await tx.query(
    `delete from audit_entries
      where id in (select id from audit_entries
                    where at < now() - make_interval(days => $1::int)
                    order by at limit $2)`,
    [days, batchSize],
  );
  return rowCount;
}

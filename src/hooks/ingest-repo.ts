import type { Queryable, QueryOptions } from '../db/database.js';
import { CURRENT_MONTH_START } from '../db/sql.js';
import type { DedupSettings, VerificationSettings } from '../channels/sender-settings.js';

export interface ReceivingChannel {
  id: string;
  workspace_id: string;
  enabled: boolean;
  webhook_token_hash: string;
  verification: VerificationSettings;
  /** Read only to check signatures; it never leaves the receiver. */
  verification_secret: string | null;
  allowed_ips: string[];
  dedup: DedupSettings;
  /** The channel's `ai.thread_key` template, or null when its events form no threads. */
  thread_key_template: string | null;
}

export async function findReceivingChannel(
  db: Queryable,
  by: { tokenHash: string } | { id: string },
  options?: QueryOptions,
): Promise<ReceivingChannel | undefined> {
  const [column, value] = 'id' in by ? ['id', by.id] : ['webhook_token_hash', by.tokenHash];
  const { rows } = await db.query<ReceivingChannel>(
    `select id, workspace_id, enabled, webhook_token_hash,
            verification, verification_secret, allowed_ips, dedup,
            ai->>'thread_key' as thread_key_template
     from channels
     where ${column} = $1 and deleted_at is null`,
    [value],
    options,
  );
  return rows[0];
}

/**
 * A refused request, kept so admins can see why a sender fails. It uses no quota; `payload` is
 * the start of the body when `payloadTruncated`.
 */
export async function insertRejectedEvent(
  db: Queryable,
  channel: ReceivingChannel,
  request: {
    payload: string;
    payloadTruncated: boolean;
    headers: Record<string, string>;
    senderIp: string | undefined;
  },
  code: string,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `insert into events (workspace_id, channel_id, status, payload, payload_truncated, error,
                         completed_at, headers, sender_ip)
     values ($1, $2, 'rejected', $3, $4, $5, now(), $6, $7)
     returning id`,
    [
      channel.workspace_id,
      channel.id,
      request.payload,
      request.payloadTruncated,
      code,
      JSON.stringify(request.headers),
      request.senderIp ?? null,
    ],
  );
  return (rows[0] as { id: string }).id;
}

export interface QuotaState {
  chatQuota: number;
  /** The start of the next calendar month (UTC), when usage counts from 0 again. */
  resetsAt: Date;
}

/** The quota a refusal names: read after the refusal, so it is the workspace's current one. */
export async function findQuota(db: Queryable, workspaceId: string): Promise<QuotaState> {
  const { rows } = await db.query<{ chat_quota: number; resets_at: Date }>(
    `select chat_quota, (${CURRENT_MONTH_START} + interval '1 month') as resets_at
     from workspaces where id = $1`,
    [workspaceId],
  );
  const row = rows[0];
  return { chatQuota: row?.chat_quota ?? 0, resetsAt: new Date(row?.resets_at ?? Date.now()) };
}

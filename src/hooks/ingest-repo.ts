import type { Queryable, QueryOptions } from '../db/database.js';
import type { DedupSettings, VerificationSettings } from '../channels/sender-settings.js';
import type { SecretBox } from '../secrets/secret-box.js';

export interface ReceivingChannel {
  id: string;
  workspace_id: string;
  enabled: boolean;
  webhook_token_hash: string;
  verification: VerificationSettings;
  /** Read only to check signatures, opened once per lookup; it never leaves the receiver. */
  verification_secret: string | null;
  allowed_ips: string[];
  dedup: DedupSettings;
  /** The channel's `ai.thread_key` template, or null when its events form no threads. */
  thread_key_template: string | null;
}

export async function findReceivingChannel(
  db: Queryable,
  secrets: SecretBox,
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
  const channel = rows[0];
  if (channel) channel.verification_secret = secrets.open(channel.verification_secret);
  return channel;
}

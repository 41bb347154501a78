import { compileConditions, type CompiledConditions } from '../conditions/conditions.js';
import type { Condition } from '../conditions/condition-schemas.js';
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
  /** Origins whose pages may post from a browser; empty: `Origin` is ignored. */
  allowed_origins: string[];
  dedup: DedupSettings;
  /** The channel's `ai.thread_key` template, or null when its events form no threads. */
  thread_key_template: string | null;
  /** The channel's `accept_when`, compiled once per lookup (the cache keeps it); undefined: all accepted. */
  accepts: CompiledConditions | undefined;
}

type ReceivingRow = Omit<ReceivingChannel, 'accepts'> & { accept_when: Condition[] };

export async function findReceivingChannel(
  db: Queryable,
  secrets: SecretBox,
  by: { tokenHash: string } | { id: string },
  options?: QueryOptions,
): Promise<ReceivingChannel | undefined> {
  const [column, value] = 'id' in by ? ['id', by.id] : ['webhook_token_hash', by.tokenHash];
  const { rows } = await db.query<ReceivingRow>(
    `select id, workspace_id, enabled, webhook_token_hash,
            verification, verification_secret, allowed_ips, allowed_origins, dedup,
            ai->>'thread_key' as thread_key_template, accept_when
     from channels
     where ${column} = $1 and deleted_at is null`,
    [value],
    options,
  );
  const row = rows[0];
  if (!row) return undefined;
  const { accept_when, ...channel } = row;
  channel.verification_secret = secrets.open(channel.verification_secret);
  return { ...channel, accepts: compileConditions(accept_when) };
}

import type { AiSettings } from '../ai/ai-settings.js';
import type { Condition } from '../conditions/condition-schemas.js';
import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { SenderChanges, StoredSenderSettings } from './sender-changes.js';
import type { DedupSettings, VerificationSettings } from './sender-settings.js';

export interface ChannelRow {
  id: string;
  workspace_id: string;
  name: string;
  template: string;
  enabled: boolean;
  /** The stored AI settings (see `toAiSettings`). */
  ai: unknown;
  /** The webhook token as stored: sealed (open it to show the URL). */
  webhook_token: string;
  /** What requests are looked up by, and what the receivers' caches know the channel by. */
  webhook_token_hash: string;
  verification: VerificationSettings;
  /** Whether a verification secret is stored; the secret itself is never read here. */
  secret_set: boolean;
  allowed_ips: string[];
  allowed_origins: string[];
  dedup: DedupSettings;
  accept_when: Condition[];
  /** The current version of the template and AI settings (channel_versions). */
  version: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, workspace_id, name, template, enabled, ai, webhook_token, webhook_token_hash,
  verification, verification_secret is not null as secret_set, allowed_ips, allowed_origins,
  dedup, accept_when, version, created_at, updated_at`;

/**
 * Keeps the version a statement's `inserted` or `updated` row has, whole; a version already kept
 * (a change that left the template and AI settings as they were) is left as it is.
 */
const recordVersion = (from: string) => `recorded as (
     insert into channel_versions (channel_id, version, template, ai)
     select id, version, template, ai from ${from}
     on conflict (channel_id, version) do nothing
   )`;
const RECORD_VERSION_INSERTED = recordVersion('inserted');
const RECORD_VERSION_UPDATED = recordVersion('updated');

export interface NewChannel {
  workspaceId: string;
  name: string;
  template: string;
  enabled: boolean;
  ai: AiSettings;
  token: string;
  tokenHash: string;
  senders: SenderChanges;
  reply: ReplyChanges;
  acceptWhen: Condition[];
}

export async function insertChannel(
  db: Queryable,
  secrets: SecretBox,
  channel: NewChannel,
): Promise<ChannelRow> {
  const { senders } = channel;
  const { rows } = await db.query<ChannelRow>(
    `with inserted as (
     insert into channels (workspace_id, name, template, enabled, webhook_token, webhook_token_hash,
                           verification, verification_secret, allowed_ips, dedup,
                           reply_secret, ai, accept_when, allowed_origins)
     values ($1, $2, $3, $4, $5, $6,
             coalesce($7::jsonb, '{"scheme": "none"}'), $8, coalesce($9::text[], '{}'),
             coalesce($10::jsonb, '{"mode": "auto", "window_s": 86400}'),
             case when $12::boolean then $11::text end, $13, $14, coalesce($15::text[], '{}'))
     returning ${COLUMNS}
     ), ${RECORD_VERSION_INSERTED}
     select * from inserted`,
    [
      channel.workspaceId,
      channel.name,
      channel.template,
      channel.enabled,
      secrets.seal(channel.token),
      channel.tokenHash,
      senders.verification ? JSON.stringify(senders.verification) : null,
      secrets.seal(senders.secret),
      senders.allowedIps ?? null,
      senders.dedup ? JSON.stringify(senders.dedup) : null,
      secrets.seal(channel.reply.secret),
      channel.reply.signing,
      JSON.stringify(channel.ai),
      JSON.stringify(channel.acceptWhen),
      senders.allowedOrigins ?? null,
    ],
  );
  return rows[0] as ChannelRow;
}

export async function listChannels(db: Queryable, workspaceId: string): Promise<ChannelRow[]> {
  const { rows } = await db.query<ChannelRow>(
    `select ${COLUMNS} from channels where workspace_id = $1 and deleted_at is null
     order by created_at, id`,
    [workspaceId],
  );
  return rows;
}

export async function findChannel(
  db: Queryable,
  workspaceId: string,
  id: string,
  { forUpdate = false } = {},
): Promise<ChannelRow | undefined> {
  const { rows } = await db.query<ChannelRow>(
    `select ${COLUMNS} from channels where workspace_id = $1 and id = $2 and deleted_at is null
     ${forUpdate ? 'for update' : ''}`,
    [workspaceId, id],
  );
  return rows[0];
}

/**
 * The channel's signing secret, which its reply URL and its `webhook` destinations sign with
 * (the URLs themselves are the destinations room's).
 */
export interface ReplyChanges {
  /** Becomes the signing secret if `signing` and the channel has no secret yet. */
  secret: string;
  /** The channel gets a reply URL or a `webhook` destination: make a secret if missing. */
  signing: boolean;
}

export interface ChannelChanges {
  name?: string;
  template?: string;
  enabled?: boolean;
  senders?: SenderChanges;
  reply: ReplyChanges;
  ai?: AiSettings;
  acceptWhen?: Condition[];
}

/** The stored settings a change of sender settings is checked against (the secret included). */
export async function findSenderSettings(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
): Promise<StoredSenderSettings | undefined> {
  const { rows } = await db.query<StoredSenderSettings>(
    `select verification, verification_secret as secret, dedup from channels
     where workspace_id = $1 and id = $2 and deleted_at is null`,
    [workspaceId, id],
  );
  const row = rows[0];
  return row && { ...row, secret: secrets.open(row.secret) };
}

export async function updateChannel(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
  changes: ChannelChanges,
): Promise<ChannelRow | undefined> {
  const { senders } = changes;
  const { rows } = await db.query<ChannelRow>(
    `with updated as (
     update channels set
       name = coalesce($3, name),
       template = coalesce($4, template),
       enabled = coalesce($5, enabled),
       verification = coalesce($6::jsonb, verification),
       verification_secret = coalesce($7, verification_secret),
       allowed_ips = coalesce($8::text[], allowed_ips),
       allowed_origins = coalesce($14::text[], allowed_origins),
       dedup = coalesce($9::jsonb, dedup),
       reply_secret = case when $11::boolean
         then coalesce(reply_secret, $10::text) else reply_secret end,
       ai = coalesce($12::jsonb, ai),
       accept_when = coalesce($13::jsonb, accept_when),
       -- a change of the template or of any AI member makes the next version; others do not
       version = case when coalesce($4, template) is distinct from template
                        or coalesce($12::jsonb, ai) is distinct from ai
                      then version + 1 else version end,
       updated_at = now()
     where workspace_id = $1 and id = $2 and deleted_at is null
     returning ${COLUMNS}
     ), ${RECORD_VERSION_UPDATED}
     select * from updated`,
    [
      workspaceId,
      id,
      changes.name ?? null,
      changes.template ?? null,
      changes.enabled ?? null,
      senders?.verification ? JSON.stringify(senders.verification) : null,
      secrets.seal(senders?.secret),
      senders?.allowedIps ?? null,
      senders?.dedup ? JSON.stringify(senders.dedup) : null,
      secrets.seal(changes.reply.secret),
      changes.reply.signing,
      changes.ai === undefined ? null : JSON.stringify(changes.ai),
      changes.acceptWhen === undefined ? null : JSON.stringify(changes.acceptWhen),
      senders?.allowedOrigins ?? null,
    ],
  );
  return rows[0];
}

/** Gives the channel a new token; `previous_token_hash` is the hash of the URL it replaced. */
export async function replaceWebhookToken(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  id: string,
  token: string,
  tokenHash: string,
): Promise<(ChannelRow & { previous_token_hash: string }) | undefined> {
  const { rows } = await db.query<ChannelRow & { previous_token_hash: string }>(
    `with previous as (
       select webhook_token_hash from channels
       where workspace_id = $1 and id = $2 and deleted_at is null
       for update
     )
     update channels set webhook_token = $3, webhook_token_hash = $4, updated_at = now()
     where workspace_id = $1 and id = $2 and deleted_at is null
     returning ${COLUMNS}, (select webhook_token_hash from previous) as previous_token_hash`,
    [workspaceId, id, secrets.seal(token), tokenHash],
  );
  return rows[0];
}

/**
 * Deleted channels keep their row so that their events stay readable in Brain Logs.
 * Returns the deleted channel's token hash; undefined when there was no such channel.
 */
export async function markChannelDeleted(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ webhook_token_hash: string }>(
    `update channels set deleted_at = now(), enabled = false, updated_at = now()
     where workspace_id = $1 and id = $2 and deleted_at is null
     returning webhook_token_hash`,
    [workspaceId, id],
  );
  return rows[0]?.webhook_token_hash;
}

/** The names of the workspace's channels whose `ai.provider` or `ai.fallbacks` name a provider. */
export async function channelsNamingProvider(
  db: Queryable,
  workspaceId: string,
  provider: string,
): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select name from channels
     where workspace_id = $1 and deleted_at is null
       and (ai->>'provider' = $2
            or ai->'fallbacks' @> jsonb_build_array(jsonb_build_object('provider', $2::text)))
     order by name, id`,
    [workspaceId, provider],
  );
  return rows.map((row) => row.name);
}

/** The names of the workspace's channels whose `ai.tools` names a tool. */
export async function channelsNamingTool(
  db: Queryable,
  workspaceId: string,
  tool: string,
): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `select name from channels
     where workspace_id = $1 and deleted_at is null
       and ai->'tools' @> jsonb_build_array($2::text)
     order by name, id`,
    [workspaceId, tool],
  );
  return rows.map((row) => row.name);
}

export interface ChannelVersionRow {
  version: number;
  template: string;
  ai: unknown;
  created_at: Date;
}

/** A channel's versions, newest first. */
export async function listChannelVersions(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<ChannelVersionRow[]> {
  const { rows } = await db.query<ChannelVersionRow>(
    `select v.version, v.template, v.ai, v.created_at from channel_versions v
     join channels c on c.id = v.channel_id
     where c.workspace_id = $1 and c.id = $2 and c.deleted_at is null
     order by v.version desc`,
    [workspaceId, id],
  );
  return rows;
}

/** One version of a channel, or undefined. */
export async function findChannelVersion(
  db: Queryable,
  workspaceId: string,
  id: string,
  version: number,
): Promise<ChannelVersionRow | undefined> {
  const { rows } = await db.query<ChannelVersionRow>(
    `select v.version, v.template, v.ai, v.created_at from channel_versions v
     join channels c on c.id = v.channel_id
     where c.workspace_id = $1 and c.id = $2 and c.deleted_at is null and v.version = $3`,
    [workspaceId, id, version],
  );
  return rows[0];
}

import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';

// The channel's reply URL is a `webhook` target of this room: its row of `destinations`, of role
// `reply_url` (migrations/0045), which only these statements write. The signing secrets it and
// the channel's `webhook` destinations sign with are the channel's, on its row.

/** A channel's reply URL as stored: `url` sealed when it holds credentials or a query string. */
export interface ReplyUrlRow {
  channel_id: string;
  url: string | null;
  enabled: boolean;
  disabled_reason: string | null;
}

/** The reply URLs of these channels; a channel without a row has none, and delivery on. */
export async function replyUrlsOfChannels(
  db: Queryable,
  channelIds: readonly string[],
): Promise<ReplyUrlRow[]> {
  if (channelIds.length === 0) return [];
  const { rows } = await db.query<ReplyUrlRow>(
    `select channel_id, url, enabled, disabled_reason from destinations
     where channel_id = any($1::bigint[]) and role = 'reply_url'`,
    [channelIds],
  );
  return rows;
}

/** The channel's reply URL as stored (sealed when it holds a secret), or null. */
export async function storedReplyUrl(db: Queryable, channelId: string): Promise<string | null> {
  const { rows } = await db.query<{ url: string | null }>(
    `select url from destinations where channel_id = $1 and role = 'reply_url'`,
    [channelId],
  );
  return rows[0]?.url ?? null;
}

/** A change of the reply URL: `url` (as stored) undefined leaves it, null removes it. */
export interface ReplyUrlWrite {
  url?: string | null;
  enabled?: boolean;
}

/**
 * Writes the channel's reply URL, making its row on the first change. Without a URL the row
 * stays: whether delivery is on holds for the URL given next.
 */
export async function writeReplyUrl(
  db: Queryable,
  channelId: string,
  change: ReplyUrlWrite,
): Promise<void> {
  await db.query(
    `insert into destinations (channel_id, role, kind, enabled, url)
     values ($1, 'reply_url', 'webhook', coalesce($4::boolean, true),
             case when $2::boolean then $3::text end)
     on conflict (channel_id) where role = 'reply_url' do update set
       url = case when $2::boolean then excluded.url else destinations.url end,
       enabled = coalesce($4::boolean, destinations.enabled),
       -- the reason explains an automatic switch-off; an admin's own choice replaces it
       disabled_reason = case when $4::boolean is null then destinations.disabled_reason end,
       updated_at = now()`,
    [channelId, change.url !== undefined, change.url ?? null, change.enabled ?? null],
  );
}

/**
 * The reply URL answered 410 Gone: its delivery is off, with the reason shown to admins (the
 * channel shows a change).
 */
export async function turnOffReplyUrl(
  db: Queryable,
  channelId: string,
  reason: string,
): Promise<void> {
  await db.query(
    `with turned_off as (
       update destinations set enabled = false, disabled_reason = $2, updated_at = now()
       where channel_id = $1 and role = 'reply_url'
       returning channel_id
     )
     update channels set updated_at = now() where id in (select channel_id from turned_off)`,
    [channelId, reason],
  );
}

/** The channel's signing secret, made now if it has none yet; undefined for no such channel. */
export async function ensureReplySecret(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  channelId: string,
  fresh: string,
): Promise<string | undefined> {
  // Writes only when there is no secret yet; the select sees the row as it was before.
  const { rows } = await db.query<{ reply_secret: string | null }>(
    `with made as (
       update channels set reply_secret = $3
       where workspace_id = $1 and id = $2 and deleted_at is null and reply_secret is null
       returning reply_secret
     )
     select coalesce((select reply_secret from made), reply_secret) as reply_secret
     from channels where workspace_id = $1 and id = $2 and deleted_at is null`,
    [workspaceId, channelId, secrets.seal(fresh)],
  );
  const stored = rows[0]?.reply_secret;
  return stored ? secrets.open(stored) : undefined;
}

/**
 * Replaces the signing secret; the one it replaces keeps signing for `overlapHours` more, so
 * receivers can switch over without losing a message.
 */
export async function rotateReplySecret(
  db: Queryable,
  secrets: SecretBox,
  workspaceId: string,
  channelId: string,
  fresh: string,
  overlapHours: number,
): Promise<string | undefined> {
  const { rows } = await db.query<{ reply_secret: string }>(
    `update channels set
       -- moved sealed as it is: the keys that opened it still do
       reply_previous_secret = reply_secret,
       reply_previous_until = case when reply_secret is null then null
         else now() + $4::integer * interval '1 hour' end,
       reply_secret = $3,
       updated_at = now()
     where workspace_id = $1 and id = $2 and deleted_at is null
     returning reply_secret`,
    [workspaceId, channelId, secrets.seal(fresh), overlapHours],
  );
  const stored = rows[0]?.reply_secret;
  return stored && secrets.open(stored);
}

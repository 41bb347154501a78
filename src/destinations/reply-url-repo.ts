import type { Queryable } from '../db/database.js';
import type { SecretBox } from '../secrets/secret-box.js';

// The channel's reply URL is a `webhook` target of this room; its settings and state are still
// stored on the channel's row (migrations/0008), which only these statements write.

/** The reply URL answered 410 Gone: its delivery is off, with the reason shown to admins. */
export async function turnOffReplyUrl(
  db: Queryable,
  channelId: string,
  reason: string,
): Promise<void> {
  await db.query(
    `update channels set reply_enabled = false, reply_disabled_reason = $2, updated_at = now()
     where id = $1`,
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

import type { Queryable } from '../db/database.js';

export interface SessionRow {
  id: string;
  admin_id: string;
  workspace_id: string | null;
  csrf_token: string;
  flash: string | null;
}

export interface NewSession {
  tokenHash: string;
  adminId: string;
  csrfToken: string;
  ttlHours: number;
}

// However busy, a session ends a week after sign-in, so a stolen cookie cannot live on forever.
const STILL_VALID = `expires_at > now() and created_at > now() - interval '7 days'`;

/**
 * Opens a session in the workspace the admin last used, or the first one they had while they
 * have used none (or were taken out of it). Resolves to that workspace's id, null for none.
 */
export async function insertSession(db: Queryable, session: NewSession): Promise<string | null> {
  const { rows } = await db.query<{ workspace_id: string | null }>(
    `insert into admin_sessions (token_hash, admin_id, workspace_id, csrf_token, expires_at)
     select $1, a.id,
       (select m.workspace_id from admin_workspaces m
        where m.admin_id = a.id
        order by m.workspace_id is not distinct from a.last_workspace_id desc,
          m.created_at, m.workspace_id
        limit 1),
       $3, now() + make_interval(hours => $4)
     from admins a where a.id = $2
     returning workspace_id`,
    [session.tokenHash, session.adminId, session.csrfToken, session.ttlHours],
  );
  return rows[0]?.workspace_id ?? null;
}

/**
 * Finds a live session and extends it by `ttlHours` from now (the expiry slides with use).
 * With `takeFlash` the pending notice is returned and cleared in the same statement.
 */
export async function resumeSession(
  db: Queryable,
  tokenHash: string,
  ttlHours: number,
  takeFlash: boolean,
): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(
    `with found as (
       select id, flash from admin_sessions
       where token_hash = $1 and ${STILL_VALID}
       for update
     )
     update admin_sessions s set
       last_seen_at = now(),
       expires_at = now() + make_interval(hours => $2),
       flash = case when $3 then null else s.flash end
     from found
     where s.id = found.id
     returning s.id, s.admin_id, s.workspace_id, s.csrf_token,
       case when $3 then found.flash end as flash`,
    [tokenHash, ttlHours, takeFlash],
  );
  return rows[0];
}

/** Ends a session; says whose it was and which workspace it had open, if it existed. */
export async function deleteSession(
  db: Queryable,
  tokenHash: string,
): Promise<{ admin_id: string; workspace_id: string | null } | undefined> {
  const { rows } = await db.query<{ admin_id: string; workspace_id: string | null }>(
    `delete from admin_sessions where token_hash = $1 returning admin_id::text, workspace_id::text`,
    [tokenHash],
  );
  return rows[0];
}

export async function deleteExpiredSessions(db: Queryable): Promise<void> {
  await db.query(`delete from admin_sessions where not (${STILL_VALID})`);
}

export async function deleteAdminSessions(db: Queryable, adminId: string): Promise<void> {
  await db.query('delete from admin_sessions where admin_id = $1', [adminId]);
}

export async function deleteOtherSessions(
  db: Queryable,
  adminId: string,
  keepId: string,
): Promise<void> {
  await db.query('delete from admin_sessions where admin_id = $1 and id <> $2', [adminId, keepId]);
}

/** Opens another workspace in the session; it is also the one the admin's next sign-in opens. */
export async function setSessionWorkspace(
  db: Queryable,
  id: string,
  workspaceId: string,
): Promise<void> {
  await db.query(
    `with session as (
       update admin_sessions set workspace_id = $2 where id = $1 returning admin_id
     )
     update admins a set last_workspace_id = $2 from session where a.id = session.admin_id`,
    [id, workspaceId],
  );
}

export async function setSessionFlash(db: Queryable, id: string, flash: string): Promise<void> {
  await db.query('update admin_sessions set flash = $2 where id = $1', [id, flash]);
}

import type { Queryable } from '../db/database.js';

export interface InvitationRow {
  id: string;
  workspace_id: string;
  workspace_name: string;
  email: string;
  expires_at: Date;
}

export interface MemberRow {
  id: string;
  email: string;
}

const STILL_OPEN = 'i.accepted_at is null and i.expires_at > now()';

export async function insertInvitation(
  db: Queryable,
  invitation: { workspaceId: string; email: string; tokenHash: string; invitedBy: string | null },
  validHours: number,
): Promise<InvitationRow> {
  const { rows } = await db.query<InvitationRow>(
    `with i as (
       insert into admin_invitations (workspace_id, email, token_hash, invited_by, expires_at)
       values ($1, $2, $3, $4, now() + make_interval(hours => $5))
       returning id, workspace_id, email, expires_at
     )
     select i.*, w.name as workspace_name from i join workspaces w on w.id = i.workspace_id`,
    [
      invitation.workspaceId,
      invitation.email,
      invitation.tokenHash,
      invitation.invitedBy,
      validHours,
    ],
  );
  return rows[0] as InvitationRow;
}

export async function findOpenInvitation(
  db: Queryable,
  tokenHash: string,
): Promise<InvitationRow | undefined> {
  const { rows } = await db.query<InvitationRow>(
    `select i.id, i.workspace_id, w.name as workspace_name, i.email, i.expires_at
     from admin_invitations i join workspaces w on w.id = i.workspace_id
     where i.token_hash = $1 and ${STILL_OPEN}`,
    [tokenHash],
  );
  return rows[0];
}

/** Uses the link up: of two concurrent uses, one gets the row and the other nothing. */
export async function acceptInvitation(
  db: Queryable,
  tokenHash: string,
): Promise<InvitationRow | undefined> {
  const { rows } = await db.query<InvitationRow>(
    `update admin_invitations i set accepted_at = now()
     from workspaces w
     where w.id = i.workspace_id and i.token_hash = $1 and ${STILL_OPEN}
     returning i.id, i.workspace_id, w.name as workspace_name, i.email, i.expires_at`,
    [tokenHash],
  );
  return rows[0];
}

export async function listOpenInvitations(
  db: Queryable,
  workspaceId: string,
): Promise<InvitationRow[]> {
  const { rows } = await db.query<InvitationRow>(
    `select i.id, i.workspace_id, w.name as workspace_name, i.email, i.expires_at
     from admin_invitations i join workspaces w on w.id = i.workspace_id
     where i.workspace_id = $1 and ${STILL_OPEN}
     order by i.created_at, i.id`,
    [workspaceId],
  );
  return rows;
}

export async function cancelInvitation(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const { rows } = await db.query(
    `delete from admin_invitations i where i.workspace_id = $1 and i.id = $2 and ${STILL_OPEN}
     returning i.id`,
    [workspaceId, id],
  );
  return rows.length > 0;
}

export async function listMembers(db: Queryable, workspaceId: string): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(
    `select a.id, a.email from admin_workspaces m join admins a on a.id = m.admin_id
     where m.workspace_id = $1 order by lower(a.email), a.id`,
    [workspaceId],
  );
  return rows;
}

/** The ids of the workspace's admins, its row locked until the transaction ends. */
export async function lockMembers(db: Queryable, workspaceId: string): Promise<string[]> {
  await db.query(`select id from workspaces where id = $1 for update`, [workspaceId]);
  const { rows } = await db.query<{ admin_id: string }>(
    `select admin_id from admin_workspaces where workspace_id = $1`,
    [workspaceId],
  );
  return rows.map((row) => String(row.admin_id));
}

export async function removeMembership(
  db: Queryable,
  workspaceId: string,
  adminId: string,
): Promise<boolean> {
  const { rows } = await db.query(
    `delete from admin_workspaces where workspace_id = $1 and admin_id = $2 returning admin_id`,
    [workspaceId, adminId],
  );
  return rows.length > 0;
}

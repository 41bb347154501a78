import type { Queryable } from '../db/database.js';
import type { Role } from '../platform/roles.js';

export interface InvitationRow {
  id: string;
  workspace_id: string;
  workspace_name: string;
  email: string;
  /** The role the invitee gets on joining. */
  role: Role;
  expires_at: Date;
}

export interface MemberRow {
  id: string;
  email: string;
  role: Role;
}

const STILL_OPEN = 'i.accepted_at is null and i.expires_at > now()';

export async function insertInvitation(
  db: Queryable,
  invitation: {
    workspaceId: string;
    email: string;
    role: Role;
    tokenHash: string;
    invitedBy: string | null;
  },
  validHours: number,
): Promise<InvitationRow> {
  const { rows } = await db.query<InvitationRow>(
    `with i as (
       insert into admin_invitations (workspace_id, email, role, token_hash, invited_by, expires_at)
       values ($1, $2, $3, $4, $5, now() + make_interval(hours => $6))
       returning id, workspace_id, email, role, expires_at
     )
     select i.*, w.name as workspace_name from i join workspaces w on w.id = i.workspace_id`,
    [
      invitation.workspaceId,
      invitation.email,
      invitation.role,
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
    `select i.id, i.workspace_id, w.name as workspace_name, i.email, i.role, i.expires_at
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
     returning i.id, i.workspace_id, w.name as workspace_name, i.email, i.role, i.expires_at`,
    [tokenHash],
  );
  return rows[0];
}

export async function listOpenInvitations(
  db: Queryable,
  workspaceId: string,
): Promise<InvitationRow[]> {
  const { rows } = await db.query<InvitationRow>(
    `select i.id, i.workspace_id, w.name as workspace_name, i.email, i.role, i.expires_at
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
    `select a.id, a.email, m.role from admin_workspaces m join admins a on a.id = m.admin_id
     where m.workspace_id = $1 order by lower(a.email), a.id`,
    [workspaceId],
  );
  return rows;
}

/**
 * The workspace's admins and their roles, its row locked until the transaction ends: changes of
 * who is an owner are taken one after the other.
 */
export async function lockMembers(
  db: Queryable,
  workspaceId: string,
): Promise<{ adminId: string; role: Role }[]> {
  await db.query(`select id from workspaces where id = $1 for update`, [workspaceId]);
  const { rows } = await db.query<{ admin_id: string; role: Role }>(
    `select admin_id, role from admin_workspaces where workspace_id = $1`,
    [workspaceId],
  );
  return rows.map((row) => ({ adminId: String(row.admin_id), role: row.role }));
}

export async function setMemberRole(
  db: Queryable,
  workspaceId: string,
  adminId: string,
  role: Role,
): Promise<void> {
  await db.query(
    `update admin_workspaces set role = $3 where workspace_id = $1 and admin_id = $2`,
    [workspaceId, adminId, role],
  );
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

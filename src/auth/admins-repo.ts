import type { Queryable } from '../db/database.js';
import type { Role } from '../platform/roles.js';

export interface AdminRow {
  id: string;
  email: string;
  password_hash: string;
}

export interface MembershipRow {
  id: string;
  name: string;
  /** The admin's role in this workspace. */
  role: Role;
}

export async function anyAdminExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query('select 1 from admins limit 1');
  return rows.length > 0;
}

export async function insertAdmin(
  db: Queryable,
  email: string,
  passwordHash: string,
): Promise<AdminRow> {
  const { rows } = await db.query<AdminRow>(
    `insert into admins (email, password_hash) values ($1, $2)
     returning id, email, password_hash`,
    [email, passwordHash],
  );
  return rows[0] as AdminRow;
}

export async function findAdminByEmail(
  db: Queryable,
  email: string,
): Promise<AdminRow | undefined> {
  const { rows } = await db.query<AdminRow>(
    'select id, email, password_hash from admins where lower(email) = lower($1)',
    [email],
  );
  return rows[0];
}

export async function findAdmin(db: Queryable, id: string): Promise<AdminRow | undefined> {
  const { rows } = await db.query<AdminRow>(
    'select id, email, password_hash from admins where id = $1',
    [id],
  );
  return rows[0];
}

export async function updatePasswordHash(
  db: Queryable,
  id: string,
  passwordHash: string,
): Promise<void> {
  await db.query('update admins set password_hash = $2, updated_at = now() where id = $1', [
    id,
    passwordHash,
  ]);
}

/** Makes the admin a member with this role; one who is a member already keeps the role they have. */
export async function addMembership(
  db: Queryable,
  adminId: string,
  workspaceId: string,
  role: Role,
): Promise<void> {
  await db.query(
    `insert into admin_workspaces (admin_id, workspace_id, role) values ($1, $2, $3)
     on conflict do nothing`,
    [adminId, workspaceId, role],
  );
}

/** The workspaces an admin may open: the default one first, then by name. */
export async function listMemberships(db: Queryable, adminId: string): Promise<MembershipRow[]> {
  const { rows } = await db.query<MembershipRow>(
    `select w.id, w.name, m.role from admin_workspaces m
     join workspaces w on w.id = m.workspace_id
     where m.admin_id = $1
     order by w.is_default desc, lower(w.name), w.id`,
    [adminId],
  );
  return rows;
}

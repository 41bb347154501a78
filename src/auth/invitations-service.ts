import type { Database } from '../db/database.js';
import { AppError, notFound } from '../errors.js';
import { newToken, sha256Hex } from '../secrets.js';
import * as admins from './admins-repo.js';
import type { Admin } from './admins-service.js';
import { hashPassword } from './passwords.js';
import * as repo from './invitations-repo.js';

/** How long an invitation's sign-in link works. */
export const INVITATION_VALID_HOURS = 24;

export interface Invitation {
  id: string;
  email: string;
  workspaceId: string;
  workspaceName: string;
  expiresAt: Date;
}

export type InviteResult =
  /** The address belongs to an admin already: they can open the workspace at once. */
  | { kind: 'added'; email: string }
  /** A new admin: the one-time link, shown once to the inviter, who passes it on. */
  | { kind: 'invited'; invitation: Invitation; link: string };

const toInvitation = (row: repo.InvitationRow): Invitation => ({
  id: row.id,
  email: row.email,
  workspaceId: row.workspace_id,
  workspaceName: row.workspace_name,
  expiresAt: new Date(row.expires_at),
});

/** Who may open a workspace: its admins, the ones invited, and the links that let them in. */
export class InvitationsService {
  constructor(
    private readonly db: Database,
    private readonly publicBaseUrl: string,
  ) {}

  async invite(workspaceId: string, invitedBy: string, email: string): Promise<InviteResult> {
    const existing = await admins.findAdminByEmail(this.db, email);
    if (existing) {
      await admins.addMembership(this.db, existing.id, workspaceId);
      return { kind: 'added', email: existing.email };
    }
    const token = newToken(256);
    const row = await repo.insertInvitation(
      this.db,
      { workspaceId, email, tokenHash: sha256Hex(token), invitedBy },
      INVITATION_VALID_HOURS,
    );
    return {
      kind: 'invited',
      invitation: toInvitation(row),
      link: `${this.publicBaseUrl}/invitations/${token}`,
    };
  }

  /** The invitation a link stands for, while it can still be used. */
  async open(token: string): Promise<Invitation | undefined> {
    const row = await repo.findOpenInvitation(this.db, sha256Hex(token));
    return row && toInvitation(row);
  }

  /**
   * Uses the link: creates the admin with the password they chose and lets them into the
   * workspace. Undefined when the link is unknown, used or expired.
   */
  async accept(
    token: string,
    password: string,
  ): Promise<{ admin: Admin; workspaceId: string } | undefined> {
    const passwordHash = await hashPassword(password);
    return this.db.transaction(async (tx) => {
      const row = await repo.acceptInvitation(tx, sha256Hex(token));
      if (!row) return undefined;
      // Someone may have created this admin since the invitation: then they only join.
      const admin =
        (await admins.findAdminByEmail(tx, row.email)) ??
        (await admins.insertAdmin(tx, row.email, passwordHash));
      await admins.addMembership(tx, admin.id, row.workspace_id);
      return { admin: { id: admin.id, email: admin.email }, workspaceId: row.workspace_id };
    });
  }

  pending(workspaceId: string): Promise<Invitation[]> {
    return repo.listOpenInvitations(this.db, workspaceId).then((rows) => rows.map(toInvitation));
  }

  async cancel(workspaceId: string, id: string): Promise<void> {
    if (!(await repo.cancelInvitation(this.db, workspaceId, id))) throw notFound('This invitation');
  }

  members(workspaceId: string): Promise<repo.MemberRow[]> {
    return repo.listMembers(this.db, workspaceId);
  }

  /** Takes an admin out of the workspace (not out of the others); nobody removes themselves. */
  async remove(workspaceId: string, adminId: string, byAdminId: string): Promise<void> {
    if (adminId === byAdminId)
      throw new AppError(
        409,
        'cannot_remove_self',
        'Not yourself',
        'You cannot remove yourself from a workspace; another admin of it can.',
      );
    if (!(await repo.removeMembership(this.db, workspaceId, adminId))) throw notFound('This admin');
  }
}

import type { Database } from '../db/database.js';
import { AppError, notFound } from '../platform/errors.js';
import { newToken, ROW_ID, sha256Hex } from '../platform/secrets.js';
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

export interface OpenInvitation extends Invitation {
  /** The address has an account: its owner joins by signing in, not through the link's form. */
  hasAccount: boolean;
}

export type AcceptResult =
  | { kind: 'joined'; admin: Admin; workspaceId: string }
  /** The address has an account (made since the invitation): nothing was used up or added. */
  | { kind: 'has_account' };

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

  /**
   * `invitedBy` is the admin who invites, or null for a management API key. The panel adds an
   * address that has an account at once (`addExisting`); the API always answers with a link,
   * which such an account's owner follows by signing in.
   */
  async invite(
    workspaceId: string,
    invitedBy: string | null,
    email: string,
    addExisting = true,
  ): Promise<InviteResult> {
    const existing = addExisting ? await admins.findAdminByEmail(this.db, email) : undefined;
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
  async open(token: string): Promise<OpenInvitation | undefined> {
    const row = await repo.findOpenInvitation(this.db, sha256Hex(token));
    if (!row) return undefined;
    const account = await admins.findAdminByEmail(this.db, row.email);
    return { ...toInvitation(row), hasAccount: account !== undefined };
  }

  /**
   * Uses the link of an address without an account: creates the admin with the password they
   * chose and lets them into the workspace. The link never signs anyone in as an admin who
   * exists: once the address has an account, its owner joins by signing in (acceptPendingFor).
   * Undefined when the link is unknown, used or expired.
   */
  async accept(token: string, password: string): Promise<AcceptResult | undefined> {
    const passwordHash = await hashPassword(password);
    return this.db.transaction(async (tx) => {
      const open = await repo.findOpenInvitation(tx, sha256Hex(token));
      if (!open) return undefined;
      if (await admins.findAdminByEmail(tx, open.email)) return { kind: 'has_account' };
      const row = await repo.acceptInvitation(tx, sha256Hex(token));
      if (!row) return undefined;
      const admin = await admins.insertAdmin(tx, row.email, passwordHash);
      await admins.addMembership(tx, admin.id, row.workspace_id);
      return {
        kind: 'joined',
        admin: { id: admin.id, email: admin.email },
        workspaceId: row.workspace_id,
      };
    });
  }

  /**
   * For an admin who has just signed in with their own password: joins the workspaces that
   * invited their address before it had an account. Resolves to the ids of those workspaces.
   */
  acceptPendingFor(admin: Admin): Promise<string[]> {
    return this.db.transaction(async (tx) => {
      const accepted = await repo.acceptInvitationsTo(tx, admin.email);
      for (const { workspace_id } of accepted)
        await admins.addMembership(tx, admin.id, workspace_id);
      return accepted.map((row) => row.workspace_id);
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

  /**
   * Takes an admin out of the workspace for a management API key, which is nobody's self: the
   * one rule left is that a workspace keeps an admin, who can sign in to its panel. Two removals
   * at once are taken one after the other (the workspace row is locked), so both cannot pass.
   */
  async removeKeepingOne(workspaceId: string, adminId: string): Promise<void> {
    if (!ROW_ID.test(adminId)) throw notFound('This admin');
    await this.db.transaction(async (tx) => {
      const members = await repo.lockMembers(tx, workspaceId);
      if (!members.includes(adminId)) throw notFound('This admin');
      if (members.length === 1)
        throw new AppError(
          409,
          'last_admin',
          'Last admin',
          "This is the workspace's only admin; invite another before removing them.",
        );
      await repo.removeMembership(tx, workspaceId, adminId);
    });
  }
}

import { currentOrigin } from '../audit/audit-context.js';
import { recordAudit } from '../audit/record-audit.js';
import type { Database, Queryable } from '../db/database.js';
import { AppError, notFound } from '../platform/errors.js';
import { lastOwner, type Role } from '../platform/roles.js';
import { newToken, sha256Hex } from '../platform/secrets.js';
import * as admins from './admins-repo.js';
import type { Admin } from './admins-service.js';
import { hashPassword } from './passwords.js';
import * as repo from './invitations-repo.js';

/** How long an invitation's sign-in link works. */
export const INVITATION_VALID_HOURS = 24;

export interface Invitation {
  id: string;
  email: string;
  /** The role the invitee gets in the workspace on joining. */
  role: Role;
  workspaceId: string;
  workspaceName: string;
  expiresAt: Date;
}

/** A new invitation and its one-time link, shown once to the inviter, who passes it on. */
export interface InviteResult {
  invitation: Invitation;
  link: string;
}

export interface OpenInvitation extends Invitation {
  /**
   * The id of the admin whose address was invited, when it has an account: only they join, and
   * only by pressing Join while signed in. Undefined for a new address, which chooses a password.
   */
  accountId: string | undefined;
}

export type AcceptResult =
  | { kind: 'joined'; admin: Admin; workspaceId: string }
  /** The address has an account (made since the invitation): nothing was used up or added. */
  | { kind: 'has_account' };

export type JoinResult =
  | { kind: 'joined'; workspaceId: string; workspaceName: string }
  /** The signed-in admin is not the one invited: nothing was used up or added. */
  | { kind: 'not_invited' };

const toInvitation = (row: repo.InvitationRow): Invitation => ({
  id: row.id,
  email: row.email,
  role: row.role,
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
   * Nobody joins a workspace without saying so: inviting, from the API or the panel, only ever
   * makes a one-time link, whether or not the address has an account. `invitedBy` is the admin
   * who invites, or null for a management API key; `role` is what the invitee will be.
   */
  async invite(
    workspaceId: string,
    invitedBy: string | null,
    email: string,
    role: Role,
  ): Promise<InviteResult> {
    const token = newToken(256);
    const row = await this.db.transaction(async (tx) => {
      const inserted = await repo.insertInvitation(
        tx,
        { workspaceId, email, role, tokenHash: sha256Hex(token), invitedBy },
        INVITATION_VALID_HOURS,
      );
      await recordAudit(tx, {
        workspaceId,
        action: 'invitation.create',
        target: { kind: 'invitation', id: inserted.id },
        changes: { email, role },
      });
      return inserted;
    });
    return { invitation: toInvitation(row), link: `${this.publicBaseUrl}/invitations/${token}` };
  }

  /** The invitation a link stands for, while it can still be used. */
  async open(token: string): Promise<OpenInvitation | undefined> {
    const row = await repo.findOpenInvitation(this.db, sha256Hex(token));
    if (!row) return undefined;
    const account = await admins.findAdminByEmail(this.db, row.email);
    return { ...toInvitation(row), accountId: account?.id };
  }

  /**
   * Uses the link of an address without an account: creates the admin with the password they
   * chose and lets them into the workspace. The inviter may have kept the link, so it never signs
   * anyone in as an admin who exists: once the address has an account, its owner joins by
   * signing in and pressing Join (join). Undefined when the link is unknown, used or expired.
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
      await admins.addMembership(tx, admin.id, row.workspace_id, row.role);
      await recordJoin(tx, row, admin);
      return {
        kind: 'joined',
        admin: { id: admin.id, email: admin.email },
        workspaceId: row.workspace_id,
      };
    });
  }

  /**
   * The consent of an admin who has an account: signed in as the address invited, they pressed
   * Join on the link's page. Uses the link up and adds the workspace to theirs. Undefined when
   * the link is unknown, used or expired.
   */
  async join(token: string, admin: Admin): Promise<JoinResult | undefined> {
    return this.db.transaction(async (tx) => {
      const open = await repo.findOpenInvitation(tx, sha256Hex(token));
      if (!open) return undefined;
      const invited = await admins.findAdminByEmail(tx, open.email);
      if (invited?.id !== admin.id) return { kind: 'not_invited' };
      const row = await repo.acceptInvitation(tx, sha256Hex(token));
      if (!row) return undefined;
      await admins.addMembership(tx, admin.id, row.workspace_id, row.role);
      await recordJoin(tx, row, admin);
      return { kind: 'joined', workspaceId: row.workspace_id, workspaceName: row.workspace_name };
    });
  }

  pending(workspaceId: string): Promise<Invitation[]> {
    return repo.listOpenInvitations(this.db, workspaceId).then((rows) => rows.map(toInvitation));
  }

  async cancel(workspaceId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await repo.cancelInvitation(tx, workspaceId, id))) throw notFound('This invitation');
      await recordAudit(tx, {
        workspaceId,
        action: 'invitation.cancel',
        target: { kind: 'invitation', id },
      });
    });
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
    await this.removeMember(workspaceId, adminId);
  }

  /**
   * Takes an admin out of the workspace for a management API key, which is nobody's self: the
   * rule left is that a workspace keeps an owner, who can manage it. Two removals at once are
   * taken one after the other (the workspace row is locked), so both cannot pass.
   */
  async removeMember(workspaceId: string, adminId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const members = await repo.lockMembers(tx, workspaceId);
      if (!members.some((member) => member.adminId === adminId)) throw notFound('This admin');
      if (isLastOwner(members, adminId)) throw lastOwner();
      await repo.removeMembership(tx, workspaceId, adminId);
      await recordAudit(tx, {
        workspaceId,
        action: 'admin.remove',
        target: { kind: 'admin', id: adminId },
      });
    });
  }

  /**
   * Gives an admin of the workspace another role. The last owner keeps theirs; a demotion and a
   * removal at once are taken one after the other, as removals are.
   */
  async setRole(workspaceId: string, adminId: string, role: Role): Promise<repo.MemberRow> {
    return this.db.transaction(async (tx) => {
      const members = await repo.lockMembers(tx, workspaceId);
      const member = members.find((m) => m.adminId === adminId);
      if (!member) throw notFound('This admin');
      if (role !== 'owner' && isLastOwner(members, adminId)) throw lastOwner();
      await repo.setMemberRole(tx, workspaceId, adminId, role);
      if (member.role !== role)
        await recordAudit(tx, {
          workspaceId,
          action: 'admin.role',
          target: { kind: 'admin', id: adminId },
          changes: { role: { before: member.role, after: role } },
        });
      const row = await admins.findAdmin(tx, adminId);
      return { id: adminId, email: row?.email ?? '', role };
    });
  }
}

/** Whether this admin is the only owner among the workspace's members. */
function isLastOwner(members: { adminId: string; role: Role }[], adminId: string): boolean {
  const owners = members.filter((member) => member.role === 'owner');
  return owners.length === 1 && owners[0]?.adminId === adminId;
}

/**
 * An invitation used: the admin who joined is the actor (they are not signed in yet when they
 * accept with a new password), from the request's address when there is one.
 */
function recordJoin(
  tx: Queryable,
  invitation: { id: string; workspace_id: string; role: Role },
  admin: Admin,
): Promise<void> {
  const { ip, userAgent } = currentOrigin();
  return recordAudit(tx, {
    workspaceId: invitation.workspace_id,
    action: 'invitation.accept',
    target: { kind: 'invitation', id: invitation.id },
    changes: { admin_id: admin.id, role: invitation.role },
    origin: { actor: { kind: 'admin', id: admin.id, name: admin.email }, ip, userAgent },
  });
}

import { recordAudit } from '../audit/record-audit.js';
import type { Database } from '../db/database.js';
import type { Workspace, WorkspacesService } from '../workspaces/workspaces-service.js';
import * as repo from './admins-repo.js';
import { hashPassword, verifyNothing, verifyPassword } from './passwords.js';

export interface Admin {
  id: string;
  email: string;
}

export type { MembershipRow as Membership } from './admins-repo.js';

const toAdmin = (row: repo.AdminRow): Admin => ({ id: row.id, email: row.email });

/** The shortest password an admin may have, wherever it is set. */
export const MIN_PASSWORD_LENGTH = 8;

/** Panel admins: who they are, how they sign in, which workspaces they may open. */
export class AdminsService {
  constructor(
    private readonly db: Database,
    private readonly workspaces: WorkspacesService,
  ) {}

  /** The admin with this e-mail and password, or undefined; unknown addresses take as long. */
  async authenticate(email: string, password: string): Promise<Admin | undefined> {
    const row = await repo.findAdminByEmail(this.db, email.trim());
    if (!row?.password_hash) return verifyNothing(password).then(() => undefined);
    return (await verifyPassword(row.password_hash, password)) ? toAdmin(row) : undefined;
  }

  async get(id: string): Promise<Admin | undefined> {
    const row = await repo.findAdmin(this.db, id);
    return row && toAdmin(row);
  }

  workspacesOf(adminId: string): Promise<repo.MembershipRow[]> {
    return repo.listMemberships(this.db, adminId);
  }

  /** A new workspace with the admin as its first member and owner, in one transaction. */
  createWorkspace(adminId: string, name: string, chatQuota: number): Promise<Workspace> {
    return this.db.transaction(async (tx) => {
      const workspace = await this.workspaces.create(name, chatQuota, tx);
      await repo.addMembership(tx, adminId, workspace.id, 'owner');
      await recordAudit(tx, {
        workspaceId: workspace.id,
        action: 'workspace.create',
        target: { kind: 'workspace', id: workspace.id },
        changes: { name: { before: null, after: name } },
      });
      return workspace;
    });
  }

  async changePassword(adminId: string, current: string, next: string): Promise<boolean> {
    const row = await repo.findAdmin(this.db, adminId);
    if (!row?.password_hash || !(await verifyPassword(row.password_hash, current))) return false;
    await repo.updatePasswordHash(this.db, adminId, await hashPassword(next));
    return true;
  }

  anyExists(): Promise<boolean> {
    return repo.anyAdminExists(this.db);
  }

  /**
   * Sets the password of the admin with this e-mail. An address nobody has is created as an
   * owner of `createIn` when it is given (the way back in for an operator who lost every
   * password), and is otherwise undefined: a mistyped address creates nobody.
   */
  async setPassword(
    email: string,
    password: string,
    createIn?: string,
  ): Promise<{ admin: Admin; created: boolean } | undefined> {
    const passwordHash = await hashPassword(password);
    return this.db.transaction(async (tx) => {
      const existing = await repo.findAdminByEmail(tx, email);
      if (existing) {
        await repo.updatePasswordHash(tx, existing.id, passwordHash);
        return { admin: toAdmin(existing), created: false };
      }
      if (createIn === undefined) return undefined;
      const admin = await repo.insertAdmin(tx, email, passwordHash);
      await repo.addMembership(tx, admin.id, createIn, 'owner');
      return { admin: toAdmin(admin), created: true };
    });
  }

  /**
   * Creates the first admin, an owner of `workspaceId`, unless an admin exists already.
   * The lock makes instances that start together create one admin, not one each.
   */
  async createFirst(
    email: string,
    password: string,
    workspaceId: string,
  ): Promise<Admin | undefined> {
    if (await repo.anyAdminExists(this.db)) return undefined;
    const passwordHash = await hashPassword(password);
    return this.db.transaction(async (tx) => {
      await tx.query(`select pg_advisory_xact_lock(hashtext('hookprompt:first-admin'))`);
      if (await repo.anyAdminExists(tx)) return undefined;
      const admin = await repo.insertAdmin(tx, email, passwordHash);
      await repo.addMembership(tx, admin.id, workspaceId, 'owner');
      return toAdmin(admin);
    });
  }
}

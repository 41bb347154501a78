import type { Database } from '../db/database.js';
import { newToken, sha256Hex } from '../platform/secrets.js';
import * as repo from './sessions-repo.js';
import { findAdminByEmail, listMemberships } from './admins-repo.js';
import { recordAudit } from '../audit/record-audit.js';
import type { AuditActor, AuditOrigin } from '../audit/audit-context.js';

/** Where a sign-in or sign-out came from: the browser's address and user agent. */
export type RequestSource = Omit<AuditOrigin, 'actor'>;

/** How an admin proved who they are. */
export type SignInMethod = 'password' | 'oidc' | 'invitation';

const adminActor = (admin: { id: string; email: string }): AuditActor => ({
  kind: 'admin',
  id: admin.id,
  name: admin.email,
});

/** A one-time notice shown on the next page, such as "Channel saved." */
export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

export interface PanelSession {
  id: string;
  adminId: string;
  workspaceId: string | null;
  csrfToken: string;
  flash: Flash | undefined;
}

/** Panel sign-in sessions, kept in the database so that every instance knows them. */
export class SessionsService {
  constructor(
    private readonly db: Database,
    private readonly ttlHours: number,
  ) {}

  /**
   * Signs an admin in: opens a session in the workspace they last used (the first one they had,
   * before they used any) and returns the cookie value; only its hash is stored. Every sign-in
   * goes through here, and signing in never adds a workspace: an admin joins one only by pressing
   * Join on its invitation (InvitationsService.join).
   */
  async start(
    admin: { id: string; email: string },
    from: RequestSource,
    via: SignInMethod,
  ): Promise<{ token: string; workspaceId: string | null }> {
    await repo.deleteExpiredSessions(this.db);
    const token = newToken(256);
    const workspaceId = await this.db.transaction(async (tx) => {
      const opened = await repo.insertSession(tx, {
        tokenHash: sha256Hex(token),
        adminId: admin.id,
        csrfToken: newToken(256),
        ttlHours: this.ttlHours,
      });
      // The entry goes to the workspace the session opens (an admin of none has no log to join).
      if (opened !== null)
        await recordAudit(tx, {
          workspaceId: opened,
          action: 'session.sign_in',
          target: { kind: 'admin', id: admin.id },
          changes: { via },
          origin: { ...from, actor: adminActor(admin) },
        });
      return opened;
    });
    return { token, workspaceId };
  }

  /**
   * A failed sign-in with a known address is recorded in each of that admin's workspaces (as
   * done by the admin the address names: who tried is not known); an unknown address in none.
   */
  async recordFailedSignIn(email: string, from: RequestSource, via: SignInMethod): Promise<void> {
    const admin = await findAdminByEmail(this.db, email.trim());
    if (!admin) return;
    await this.db.transaction(async (tx) => {
      const workspaces = await listMemberships(tx, admin.id);
      await recordAudit(tx, {
        workspaceId: workspaces.map((workspace) => workspace.id),
        action: 'session.sign_in_failed',
        target: { kind: 'admin', id: admin.id },
        changes: { via },
        origin: { ...from, actor: adminActor(admin) },
      });
    });
  }

  async resume(token: string, takeFlash: boolean): Promise<PanelSession | undefined> {
    const row = await repo.resumeSession(this.db, sha256Hex(token), this.ttlHours, takeFlash);
    if (!row) return undefined;
    return {
      id: row.id,
      adminId: row.admin_id,
      workspaceId: row.workspace_id,
      csrfToken: row.csrf_token,
      flash: row.flash ? (JSON.parse(row.flash) as Flash) : undefined,
    };
  }

  /** Ends a session without recording it (a new sign-in's replacing the browser's old one). */
  async end(token: string): Promise<void> {
    await repo.deleteSession(this.db, sha256Hex(token));
  }

  /** Signs out: ends the session and records `session.sign_out` in the workspace it had open. */
  async signOut(token: string, admin: { id: string; email: string }, from: RequestSource) {
    await this.db.transaction(async (tx) => {
      const ended = await repo.deleteSession(tx, sha256Hex(token));
      if (ended?.workspace_id)
        await recordAudit(tx, {
          workspaceId: ended.workspace_id,
          action: 'session.sign_out',
          target: { kind: 'admin', id: ended.admin_id },
          origin: { ...from, actor: adminActor(admin) },
        });
    });
  }

  /** Signs the admin out everywhere. */
  endAll(adminId: string): Promise<void> {
    return repo.deleteAdminSessions(this.db, adminId);
  }

  endOthers(session: PanelSession): Promise<void> {
    return repo.deleteOtherSessions(this.db, session.adminId, session.id);
  }

  /** Opens another of the admin's workspaces; their next sign-in opens it too. */
  switchWorkspace(session: PanelSession, workspaceId: string): Promise<void> {
    return repo.setSessionWorkspace(this.db, session.id, workspaceId);
  }

  flash(session: PanelSession, flash: Flash): Promise<void> {
    return repo.setSessionFlash(this.db, session.id, JSON.stringify(flash));
  }
}

import type { Database } from '../db/database.js';
import { newToken, sha256Hex } from '../platform/secrets.js';
import * as repo from './sessions-repo.js';

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
  async start(adminId: string): Promise<{ token: string; workspaceId: string | null }> {
    await repo.deleteExpiredSessions(this.db);
    const token = newToken(256);
    const workspaceId = await repo.insertSession(this.db, {
      tokenHash: sha256Hex(token),
      adminId,
      csrfToken: newToken(256),
      ttlHours: this.ttlHours,
    });
    return { token, workspaceId };
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

  end(token: string): Promise<void> {
    return repo.deleteSession(this.db, sha256Hex(token));
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

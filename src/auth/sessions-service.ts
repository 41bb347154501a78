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

  /** Opens a session and returns the cookie value; only its hash is stored. */
  async start(adminId: string, workspaceId: string | null): Promise<string> {
    await repo.deleteExpiredSessions(this.db);
    const token = newToken(256);
    await repo.insertSession(this.db, {
      tokenHash: sha256Hex(token),
      adminId,
      workspaceId,
      csrfToken: newToken(256),
      ttlHours: this.ttlHours,
    });
    return token;
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

  switchWorkspace(session: PanelSession, workspaceId: string): Promise<void> {
    return repo.setSessionWorkspace(this.db, session.id, workspaceId);
  }

  flash(session: PanelSession, flash: Flash): Promise<void> {
    return repo.setSessionFlash(this.db, session.id, JSON.stringify(flash));
  }
}

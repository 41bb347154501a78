import { CHANGED, recordAudit } from '../audit/record-audit.js';
import type { AuditActor } from '../audit/audit-context.js';
import type { Database } from '../db/database.js';
import { notFound } from '../platform/errors.js';
import type { Role } from '../platform/roles.js';
import { newToken, sameSecret, sha256Hex } from '../platform/secrets.js';
import * as repo from './api-keys-repo.js';

export interface ApiKey {
  id: string;
  name: string;
  /** What the key may do in its workspace (docs/roles.md). */
  role: Role;
  /** The first characters of the key, enough to tell keys apart. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** The prefix says what the secret is when it turns up in a file or a log; 256 random bits follow. */
const KEY_PREFIX = 'hp_';
const SHOWN_PREFIX_LENGTH = 10;

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

function toApiKey(row: repo.ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    prefix: row.prefix,
    created_at: new Date(row.created_at).toISOString(),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

/** What a key opens: its workspace, and its role there. */
const ADMIN_API_KEY_ACTOR: AuditActor = { kind: 'api_key', id: null, name: 'ADMIN_API_KEY' };

export interface KeyAccess {
  workspaceId: string;
  role: Role;
  /** The key as the audit log names it (ADMIN_API_KEY has no id). */
  actor: AuditActor;
}

export interface ApiKeysOptions {
  /** ADMIN_API_KEY: manages the default workspace. */
  adminApiKey: string | undefined;
  /** The default workspace's id (known once the service has started). */
  defaultWorkspaceId: () => string;
}

/**
 * Keys for the management API of one workspace. A key is shown once, when created; only its
 * SHA-256 is stored, which is what `authenticate` looks up.
 */
export class ApiKeysService {
  constructor(
    private readonly db: Database,
    private readonly options: ApiKeysOptions,
  ) {}

  /**
   * The workspace this key manages and its role there, or undefined for an unknown or revoked
   * key. ADMIN_API_KEY is an owner of the default workspace.
   */
  async authenticate(key: string): Promise<KeyAccess | undefined> {
    const { adminApiKey, defaultWorkspaceId } = this.options;
    if (adminApiKey && sameSecret(key, adminApiKey))
      return { workspaceId: defaultWorkspaceId(), role: 'owner', actor: ADMIN_API_KEY_ACTOR };
    const row = await repo.useApiKey(this.db, sha256Hex(key));
    return (
      row && {
        workspaceId: row.workspace_id,
        role: row.role,
        actor: { kind: 'api_key', id: row.id, name: row.name },
      }
    );
  }

  async create(
    workspaceId: string,
    name: string,
    role: Role = 'owner',
  ): Promise<{ key: string; apiKey: ApiKey }> {
    const key = KEY_PREFIX + newToken(256);
    const row = await this.db.transaction(async (tx) => {
      const inserted = await repo.insertApiKey(tx, {
        workspaceId,
        name,
        role,
        prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
        keyHash: sha256Hex(key),
      });
      await recordAudit(tx, {
        workspaceId,
        action: 'api_key.create',
        target: { kind: 'api_key', id: inserted.id },
        changes: { name, role, key: CHANGED },
      });
      return inserted;
    });
    return { key, apiKey: toApiKey(row) };
  }

  async list(workspaceId: string): Promise<ApiKey[]> {
    return (await repo.listApiKeys(this.db, workspaceId)).map(toApiKey);
  }

  async revoke(workspaceId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await repo.revokeApiKey(tx, workspaceId, id))) throw notFound('This API key');
      await recordAudit(tx, {
        workspaceId,
        action: 'api_key.revoke',
        target: { kind: 'api_key', id },
      });
    });
  }
}

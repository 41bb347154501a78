import { isDeepStrictEqual } from 'node:util';
import type { Queryable } from '../db/database.js';
import { currentOrigin, type AuditOrigin } from './audit-context.js';
import { insertAuditEntries } from './audit-repo.js';

/** What a secret member's change is recorded as: that it changed, never its value. */
export const CHANGED = '(changed)';

/** `{member: {before, after}}` for an update; a secret member is `"(changed)"`. */
export type AuditChanges = Record<string, unknown>;

export interface AuditEntry {
  /** The workspace the change was made in (several for a failed sign-in: one entry in each). */
  workspaceId: string | readonly string[];
  /** `<target kind>.<verb>`: `channel.update`, `event.replay`, `session.sign_in`. */
  action: string;
  target: { kind: string; id: string | null };
  changes?: AuditChanges;
  /** Who and where from; the current request's (or the system) when not given. */
  origin?: AuditOrigin;
}

/**
 * Appends an entry to the audit log on `tx`, the transaction of the change it records, so that
 * the two commit or roll back together. Every change made through the API or the panel calls
 * this once, inside its transaction.
 */
export async function recordAudit(tx: Queryable, entry: AuditEntry): Promise<void> {
  const { actor, ip, userAgent } = entry.origin ?? currentOrigin();
  const workspaces =
    typeof entry.workspaceId === 'string' ? [entry.workspaceId] : entry.workspaceId;
  await insertAuditEntries(
    tx,
    workspaces.map((workspaceId) => ({
      workspace_id: workspaceId,
      actor_kind: actor.kind,
      actor_id: actor.id,
      actor_name: actor.name,
      action: entry.action,
      target_kind: entry.target.kind,
      target_id: entry.target.id,
      changes: entry.changes ?? {},
      ip,
      user_agent: userAgent,
    })),
  );
}

/**
 * The members of `members` that differ between `before` and `after`, as `{before, after}`;
 * those named in `secret` as `"(changed)"` when the change set them, whatever they were.
 */
export function changesBetween(
  before: object | undefined,
  after: object,
  members: readonly string[],
  secret: readonly string[] = [],
): AuditChanges {
  const changes: AuditChanges = {};
  for (const member of members) {
    const was = (before as Record<string, unknown> | undefined)?.[member] ?? null;
    const now = (after as Record<string, unknown>)[member] ?? null;
    if (secret.includes(member)) changes[member] = CHANGED;
    else if (!isDeepStrictEqual(was, now)) changes[member] = { before: was, after: now };
  }
  return changes;
}

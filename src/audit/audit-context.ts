import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestHandler } from 'express';

/** Who made a change: a signed-in admin, a management API key, or the service itself. */
export interface AuditActor {
  kind: 'admin' | 'api_key' | 'system';
  /** The admin's or the key's id; null for the system and for ADMIN_API_KEY. */
  id: string | null;
  name: string;
}

/** Where a change came from: its actor and, for a request, the caller's address and browser. */
export interface AuditOrigin {
  actor: AuditActor;
  ip: string | null;
  userAgent: string | null;
}

export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null, name: 'system' };

const SYSTEM_ORIGIN: AuditOrigin = { actor: SYSTEM_ACTOR, ip: null, userAgent: null };

/**
 * The origin of the request being served, carried down to the services the way the request's
 * async work runs, so that every service method records its actor without each route and
 * service passing it by hand. Set once per request by `auditOrigin` after authentication.
 */
const origins = new AsyncLocalStorage<AuditOrigin>();

/** The origin of the work being done now: the request's, or the system's outside any. */
export const currentOrigin = (): AuditOrigin => origins.getStore() ?? SYSTEM_ORIGIN;

/** Runs `work` as done by `origin` (a sign-in, before the admin has a session; tests). */
export const runAs = <T>(origin: AuditOrigin, work: () => T): T => origins.run(origin, work);

/**
 * Middleware that runs the rest of the request as `actorOf` says (mounted after authentication
 * and after the body is read, whose stream events would lose the context).
 */
export const auditOrigin =
  (actorOf: (res: Parameters<RequestHandler>[1]) => AuditActor): RequestHandler =>
  (req, res, next) =>
    origins.run(
      { actor: actorOf(res), ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null },
      next,
    );

/** The origin of a request before anyone is signed in (a sign-in) as `actor`. */
export const requestOrigin = (
  req: { ip?: string | undefined; get(name: string): string | undefined },
  actor: AuditActor,
): AuditOrigin => ({ actor, ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null });

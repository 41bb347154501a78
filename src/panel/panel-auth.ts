import type { Request, RequestHandler, Response } from 'express';
import type { PanelServices } from './panel-services.js';
import { AppError } from '../platform/errors.js';
import type { Admin, Membership } from '../auth/admins-service.js';
import { clearCookie, readCookie, type PanelCookies } from './cookies.js';
import type { PanelSession } from '../auth/sessions-service.js';
import type { Role } from '../platform/roles.js';
import { sameSecret } from '../platform/secrets.js';
import { PANEL_ROLES } from './panel-roles.js';

/** What every signed-in page knows; also in `res.locals` for the views. */
export interface SignedIn {
  session: PanelSession;
  admin: Admin;
  workspaces: Membership[];
  /** The workspace being looked at; undefined only for an admin who belongs to none. */
  workspace: Membership | undefined;
}

export function signedIn(res: Response): SignedIn {
  return res.locals.signedIn as SignedIn;
}

/** The current workspace's id, for pages that only make sense inside one. */
export function workspaceId(res: Response): string {
  const workspace = signedIn(res).workspace;
  if (!workspace)
    throw new AppError(409, 'no_workspace', 'No workspace', 'Create a workspace first.');
  return workspace.id;
}

/**
 * The admin signed in with this request's cookie, if any, put in `res.locals` for the page; a
 * cookie that no longer stands for a session is cleared.
 */
export async function resumeSignedIn(
  ctx: PanelServices,
  cookies: PanelCookies,
  req: Request,
  res: Response,
): Promise<SignedIn | undefined> {
  const token = readCookie(req, cookies.session);
  // Only a page view uses up the one-time notice; form posts redirect to the page that shows it.
  const session = token ? await ctx.sessions.resume(token, req.method === 'GET') : undefined;
  const admin = session && (await ctx.admins.get(session.adminId));
  if (!session || !admin) {
    if (token) clearCookie(res, cookies, cookies.session);
    return undefined;
  }
  const workspaces = await ctx.admins.workspacesOf(admin.id);
  const workspace = workspaces.find((w) => w.id === session.workspaceId) ?? workspaces[0];
  // Panel pages hold secrets (webhook URLs) and must not outlive a sign-out in any cache.
  res.set('Cache-Control', 'no-store');
  const signedIn: SignedIn = { session, admin, workspaces, workspace };
  res.locals.signedIn = signedIn;
  const role = workspace?.role;
  Object.assign(res.locals, {
    admin,
    workspaces,
    workspace,
    role,
    // What the views ask before they show a button or a form: the rule its route is held to.
    can: (method: string, path: string) => PANEL_ROLES.allows(role, method, path),
    csrfToken: session.csrfToken,
    flash: session.flash,
  });
  return signedIn;
}

/** Resumes the session from its cookie, or sends the browser to the sign-in page. */
export function requireAdmin(ctx: PanelServices, cookies: PanelCookies): RequestHandler {
  return async (req, res, next) => {
    if (await resumeSignedIn(ctx, cookies, req, res)) return next();
    const back = req.method === 'GET' ? `?next=${encodeURIComponent(req.originalUrl)}` : '';
    res.redirect(303, `/login${back}`);
  };
}

/** The admin's role in the workspace being looked at; undefined when they belong to none. */
export const roleOf = (res: Response): Role | undefined => signedIn(res).workspace?.role;

/** Whether the signed-in admin's role allows this request (pages that leave out what it does not). */
export const can = (res: Response, method: string, path: string): boolean =>
  PANEL_ROLES.allows(roleOf(res), method, path);

/**
 * The one check of the role of every signed-in route of the panel, against its policy table
 * (panel-roles.ts): a form posted by hand past a hidden button is refused like the API refuses,
 * on a page naming the role it needs.
 */
export const roleGate: RequestHandler = PANEL_ROLES.gate(roleOf);

/** Pages of one workspace send an admin without any to the page that creates one. */
export const requireWorkspace: RequestHandler = (_req, res, next) => {
  if (!signedIn(res).workspace) return res.redirect(303, '/workspaces/new');
  next();
};

export const csrfRefused = () =>
  new AppError(
    403,
    'csrf_failed',
    'Form expired',
    'This form is out of date or was sent from another site. Go back, reload the page and try again.',
  );

/** Every state-changing request must carry the session's CSRF token in the `_csrf` field. */
export const checkCsrf: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  if (!sameSecret(formField(req.body, '_csrf'), signedIn(res).session.csrfToken))
    throw csrfRefused();
  next();
};

/** A text field of a parsed form; absent or repeated fields read as the empty string. */
export function formField(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

import { Router, type Request, type RequestHandler, type Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { CREATE_ADMIN_COMMAND, SET_PASSWORD_COMMAND } from '../auth/first-admin.js';
import type { PanelServices } from './panel-services.js';
import { failOpenRedisStore, rateLimitLogger } from '../platform/redis-store.js';
import {
  clearCookie,
  loginFormToken,
  readCookie,
  setCookie,
  type PanelCookies,
} from './cookies.js';
import { localPath } from './local-path.js';
import { AppError } from '../platform/errors.js';
import { sameSecret } from '../platform/secrets.js';
import { checkCsrf, formField, requireAdmin, signedIn } from './panel-auth.js';
import type { Admin } from '../auth/admins-service.js';
import type { RequestSource, SignInMethod } from '../auth/sessions-service.js';

const LOGIN_WINDOW_MS = 15 * 60_000;
const LOGIN_FAILURES_ALLOWED = 10;

/** `/login` and `/logout`. */
export function loginPages(ctx: PanelServices, cookies: PanelCookies): Router {
  const router = Router();
  // Only the embedded database kept in DATA_DIR gets a generated first password, in a file the
  // start-up log names: the page tells visitors no path of the server.
  const passwordInFile = ctx.config.databaseUrl === undefined;

  const showLogin = (
    req: Request,
    res: Response,
    status: number,
    view: { email?: string; error?: string; notice?: string },
  ) => {
    const token = loginFormToken(req, res, cookies);
    const next = localPath(req.body?.next ?? req.query.next, '');
    res.set('Cache-Control', 'no-store');
    res.status(status).render('login', {
      title: 'Sign in',
      loginCsrf: token,
      next,
      email: view.email ?? '',
      error: view.error,
      notice: view.notice,
      passwordInFile,
      setPasswordCommand: SET_PASSWORD_COMMAND,
      createAdminCommand: CREATE_ADMIN_COMMAND,
      passwordLogin: ctx.config.passwordLogin,
      sso: ctx.config.oidc && {
        name: ctx.config.oidc.name,
        href: `/auth/oidc/start${next ? `?next=${encodeURIComponent(next)}` : ''}`,
      },
    });
  };

  // With password sign-in off the form is not shown, and a posted one is refused before it is read.
  const refuseWhenOff: RequestHandler = (_req, _res, next) => {
    if (ctx.config.passwordLogin) return next();
    throw new AppError(
      403,
      'password_login_off',
      'Password sign-in is off',
      `Sign in with ${ctx.config.oidc?.name ?? 'SSO'} instead.`,
    );
  };

  router.get('/login', async (req, res) => {
    const token = readCookie(req, cookies.session);
    if (token && (await ctx.sessions.resume(token, false))) {
      return res.redirect(303, localPath(req.query.next));
    }
    showLogin(req, res, 200, {
      notice: req.query.signed_out === '1' ? 'You are signed out.' : undefined,
    });
  });

  // Failed attempts are counted per address and e-mail, so guessing one admin's password is slow
  // while other admins (or the same admin from elsewhere) can still sign in.
  const redis = ctx.redis;
  const limitFailures = rateLimit({
    windowMs: LOGIN_WINDOW_MS,
    limit: LOGIN_FAILURES_ALLOWED,
    skipSuccessfulRequests: true,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'login',
    passOnStoreError: true,
    store: redis
      ? failOpenRedisStore(redis, 'hookprompt:rl:login:', () =>
          ctx.metrics.rateLimitFailOpen.inc({ limit: 'sign-in' }),
        )
      : undefined,
    logger: rateLimitLogger(ctx.log),
    keyGenerator: (req) =>
      `${ipKeyGenerator(req.ip ?? '')}|${formField(req.body, 'email').trim().toLowerCase()}`,
    handler: (req, res) => {
      const minutes = Math.ceil(Number(res.getHeader('Retry-After') || 60) / 60);
      showLogin(req, res, 429, {
        email: formField(req.body, 'email'),
        error: `Too many failed sign-ins for this address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      });
    },
  });

  router.post('/login', refuseWhenOff, limitFailures, async (req, res) => {
    const email = formField(req.body, 'email');
    const expected = readCookie(req, cookies.login) ?? '';
    if (!expected || !sameSecret(formField(req.body, '_csrf'), expected)) {
      return showLogin(req, res, 403, {
        email,
        error: 'The sign-in form had expired. Please try again.',
      });
    }
    const admin = await ctx.admins.authenticate(email, formField(req.body, 'password'));
    if (!admin) {
      await ctx.sessions.recordFailedSignIn(email, requestSource(req), 'password');
      return showLogin(req, res, 401, { email, error: 'Wrong e-mail address or password.' });
    }

    await startSession(ctx, cookies, req, res, admin, 'password');
    res.redirect(303, localPath(req.body.next));
  });

  router.post('/logout', requireAdmin(ctx, cookies), checkCsrf, async (req, res) => {
    const token = readCookie(req, cookies.session);
    if (token) await ctx.sessions.signOut(token, signedIn(res).admin, requestSource(req));
    clearCookie(res, cookies, cookies.session);
    res.redirect(303, '/login?signed_out=1');
  });

  return router;
}

/**
 * Signs the browser in as this admin, whichever way they proved who they are: a fresh session id
 * at every sign-in, so an id planted before sign-in never becomes valid. Signing in adds no
 * workspace and opens the one this admin last used.
 */
export async function startSession(
  ctx: PanelServices,
  cookies: PanelCookies,
  req: Request,
  res: Response,
  admin: Admin,
  via: SignInMethod,
): Promise<void> {
  const adminId = admin.id;
  const previous = readCookie(req, cookies.session);
  if (previous) await ctx.sessions.end(previous);
  const { token, workspaceId } = await ctx.sessions.start(admin, requestSource(req), via);
  setCookie(res, cookies, cookies.session, token);
  clearCookie(res, cookies, cookies.login);
  ctx.log.info({ adminId, workspaceId }, 'admin signed in');
}

/** The browser's address and user agent, for the audit log's sign-in entries. */
export const requestSource = (req: Request): RequestSource => ({
  ip: req.ip ?? null,
  userAgent: req.get('user-agent') ?? null,
});

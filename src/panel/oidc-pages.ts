import { requestOrigin, runAs, SYSTEM_ACTOR } from '../audit/audit-context.js';
import { Router } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { AppError } from '../platform/errors.js';
import { failOpenRedisStore, rateLimitLogger } from '../platform/redis-store.js';
import type { PanelServices } from './panel-services.js';
import { clearCookie, readCookie, setCookie, type PanelCookies } from './cookies.js';
import { localPath } from './local-path.js';
import { startSession } from './login-pages.js';
import { newToken } from '../platform/secrets.js';

const START_WINDOW_MS = 15 * 60_000;
const STARTS_ALLOWED = 300;

/**
 * Sign-in with the company's identity provider: `/auth/oidc/start` sends the browser there,
 * `/auth/oidc/callback` is where it comes back. Absent (404) when OIDC_* is not set.
 */
export function oidcPages(ctx: PanelServices, cookies: PanelCookies): Router {
  const router = Router();
  const signIns = ctx.oidcSignIns;
  if (!signIns) return router;

  // Each start stores a row until its callback or for ten minutes: one address cannot fill the
  // table, while an office behind one address can still sign everyone in at nine.
  const limitStarts = rateLimit({
    windowMs: START_WINDOW_MS,
    limit: STARTS_ALLOWED,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'sso-start',
    passOnStoreError: true,
    store: ctx.redis
      ? failOpenRedisStore(ctx.redis, 'hookprompt:rl:sso-start:', () =>
          ctx.metrics.rateLimitFailOpen.inc({ limit: 'sso-start' }),
        )
      : undefined,
    logger: rateLimitLogger(ctx.log),
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? ''),
    handler: (_req, _res, next) => {
      next(
        new AppError(
          429,
          'too_many_sign_ins',
          'Too many sign-ins',
          'Too many sign-ins were started from this address. Try again in a few minutes.',
        ),
      );
    },
  });

  router.get('/auth/oidc/start', limitStarts, async (req, res) => {
    // One key per browser, so sign-ins started in several tabs can each finish.
    const browserKey = readCookie(req, cookies.oidc) ?? newToken(256);
    const url = await signIns.start(browserKey, localPath(req.query.next, ''));
    setCookie(res, cookies, cookies.oidc, browserKey);
    res.set('Cache-Control', 'no-store');
    res.redirect(303, url.href);
  });

  router.get('/auth/oidc/callback', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    // openid-client reads the code, state and issuer from the URL the browser was sent to.
    const at = req.originalUrl.indexOf('?');
    const query = at < 0 ? '' : req.originalUrl.slice(at);
    const callbackUrl = new URL(`${ctx.config.publicBaseUrl}/auth/oidc/callback${query}`);
    // An account made by this sign-in is recorded with the browser's address.
    const signedIn = await runAs(requestOrigin(req, SYSTEM_ACTOR), () =>
      signIns.finish(callbackUrl, readCookie(req, cookies.oidc)),
    );
    await startSession(ctx, cookies, req, res, signedIn.admin, 'oidc');
    clearCookie(res, cookies, cookies.oidc);
    res.redirect(303, localPath(signedIn.nextPath));
  });

  return router;
}

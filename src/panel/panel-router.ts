import { auditOrigin } from '../audit/audit-context.js';
import { auditPages } from './audit/audit-pages.js';
import compression from 'compression';
import express, { Router, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { PanelServices } from './panel-services.js';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { publicDir } from '../platform/paths.js';
import { accountPages } from './account/account-pages.js';
import { adminPages } from './workspace/admin-pages.js';
import { alertPages } from './alerts/alert-pages.js';
import { channelPages } from './channels/channel-pages.js';
import { panelCookies } from './cookies.js';
import { fmt } from './format.js';
import { logPages } from './logs/log-pages.js';
import { invitationPages } from './workspace/invitation-pages.js';
import { loginPages } from './login-pages.js';
import { oidcPages } from './oidc-pages.js';
import { providerPages } from './providers/provider-pages.js';
import { toolPages } from './tools/tool-pages.js';
import { replyPages } from './channels/reply-pages.js';
import {
  checkCsrf,
  requireAdmin,
  requireWorkspace,
  roleGate,
  signedIn as signedInOf,
} from './panel-auth.js';
import { newWorkspacePages, workspacePages } from './workspace/workspace-pages.js';

// The package exports only its ES and CommonJS builds; the browser build sits beside them.
const chartJsFile = join(
  dirname(createRequire(import.meta.url).resolve('chart.js')),
  'chart.umd.js',
);

/** Room for a sample payload as large as the webhook body limit, plus the rest of the editor form. */
const FORM_OVERHEAD_BYTES = 256 * 1024;

/**
 * Panel pages, scripts and styles go out compressed; a live stream never is: the compressor
 * would hold its messages back until a buffer fills.
 */
const compressUnlessStream = (req: Request, res: Response) =>
  !String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') &&
  compression.filter(req, res);

/**
 * The management panel: server-rendered pages that use the same services as the API. Mounted after
 * /hooks and /api; paths it does not know fall through to the app's 404.
 */
export function panelRouter(ctx: PanelServices): Router {
  const router = Router();
  const https = ctx.config.publicBaseUrl.startsWith('https:');
  const cookies = panelCookies(ctx.config);

  router.use(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          fontSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          objectSrc: ["'none'"],
          ...(https ? { upgradeInsecureRequests: [] } : {}),
        },
      },
      strictTransportSecurity: https,
      referrerPolicy: { policy: 'same-origin' },
    }),
  );
  router.use(compression({ filter: compressUnlessStream }));
  router.use('/static', express.static(publicDir, { index: false, maxAge: '1h' }));
  // The one chart library of the panel, served from its package (no CDN: the CSP allows 'self').
  router.get('/vendor/chart.umd.js', (_req, res) =>
    res.sendFile(chartJsFile, { maxAge: '1d', headers: { 'Content-Type': 'text/javascript' } }),
  );
  router.get('/favicon.ico', (_req, res) => res.redirect(301, '/static/favicon.svg'));
  router.use(
    express.urlencoded({ extended: false, limit: ctx.config.bodyLimitBytes + FORM_OVERHEAD_BYTES }),
  );
  router.use((_req, res, next) => {
    res.locals.fmt = fmt;
    next();
  });

  router.use(loginPages(ctx, cookies));
  router.use(oidcPages(ctx, cookies));
  router.use(invitationPages(ctx, cookies));
  router.get('/', (_req, res) => res.redirect(302, '/channels'));

  // The signed-in admin is the actor of every change a request makes (the audit log).
  const asAdmin = auditOrigin((res) => {
    const { admin } = signedInOf(res);
    return { kind: 'admin', id: admin.id, name: admin.email };
  });
  const signedIn = [requireAdmin(ctx, cookies), checkCsrf, roleGate, asAdmin];
  const replies = replyPages(ctx);
  router.use('/channels', ...signedIn, requireWorkspace, replies.channels, channelPages(ctx));
  router.use('/logs', ...signedIn, requireWorkspace, replies.logs, logPages(ctx));
  router.use('/providers', ...signedIn, requireWorkspace, providerPages(ctx));
  router.use('/tools', ...signedIn, requireWorkspace, toolPages(ctx));
  router.use('/alerts', ...signedIn, requireWorkspace, alertPages(ctx));
  router.use('/workspace/admins', ...signedIn, requireWorkspace, adminPages(ctx));
  router.use('/workspace', ...signedIn, workspacePages(ctx));
  router.use('/workspaces', ...signedIn, newWorkspacePages(ctx));
  router.use('/account', ...signedIn, accountPages(ctx));
  router.use('/audit', ...signedIn, requireWorkspace, auditPages(ctx));
  return router;
}

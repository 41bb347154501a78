import { Router, type Request, type Response } from 'express';
import { MIN_PASSWORD_LENGTH } from '../auth/admins-service.js';
import type { OpenInvitation } from '../auth/invitations-service.js';
import { sameSecret } from '../platform/secrets.js';
import type { PanelServices } from './panel-services.js';
import {
  clearCookie,
  loginFormToken,
  readCookie,
  setCookie,
  type PanelCookies,
} from './cookies.js';
import { formField } from './panel-auth.js';

/**
 * `/invitations/:token`: the one-time link an admin passed on. Opening it shows a form (a link
 * preview or a scanner that fetches it uses nothing up); choosing a password there creates the
 * admin, uses the link up and signs them in to the workspace they were invited to. The inviter
 * may have kept the link, so it never signs anyone in to an account that exists: for such an
 * address the page offers the ordinary sign-in, which joins the workspace (see loginPages).
 */
export function invitationPages(ctx: PanelServices, cookies: PanelCookies): Router {
  const router = Router();

  const show = (
    req: Request,
    res: Response,
    status: number,
    view: {
      email?: string;
      workspaceName?: string;
      hasAccount?: boolean;
      errors?: Record<string, string>;
    },
  ) => {
    const token = loginFormToken(req, res, cookies);
    res.set('Cache-Control', 'no-store');
    res.set('Referrer-Policy', 'no-referrer');
    res.status(status).render('invitation', {
      title: view.email ? 'Join a workspace' : 'Invitation not valid',
      formCsrf: token,
      minLength: MIN_PASSWORD_LENGTH,
      errors: view.errors ?? {},
      ...view,
    });
  };

  router.get('/invitations/:token', async (req, res) => {
    const invitation = await ctx.invitations.open(String(req.params.token));
    if (!invitation) return show(req, res, 410, {});
    show(req, res, 200, viewOf(invitation));
  });

  router.post('/invitations/:token', async (req, res) => {
    const token = String(req.params.token);
    const invitation = await ctx.invitations.open(token);
    if (!invitation) return show(req, res, 410, {});
    const view = viewOf(invitation);
    if (invitation.hasAccount) return show(req, res, 409, { ...view, errors: HAS_ACCOUNT });
    const expected = readCookie(req, cookies.login) ?? '';
    if (!expected || !sameSecret(formField(req.body, '_csrf'), expected))
      return show(req, res, 403, {
        ...view,
        errors: { form: 'The form had expired. Please try again.' },
      });
    const password = formField(req.body, 'password');
    if (password.length < MIN_PASSWORD_LENGTH)
      return show(req, res, 400, {
        ...view,
        errors: { password: `must be at least ${MIN_PASSWORD_LENGTH} characters long` },
      });
    if (password !== formField(req.body, 'confirm_password'))
      return show(req, res, 400, { ...view, errors: { confirm_password: 'does not match' } });

    const accepted = await ctx.invitations.accept(token, password);
    if (!accepted) return show(req, res, 410, {});
    if (accepted.kind === 'has_account')
      return show(req, res, 409, { ...view, hasAccount: true, errors: HAS_ACCOUNT });
    const previous = readCookie(req, cookies.session);
    if (previous) await ctx.sessions.end(previous);
    setCookie(
      res,
      cookies,
      cookies.session,
      await ctx.sessions.start(accepted.admin.id, accepted.workspaceId),
    );
    clearCookie(res, cookies, cookies.login);
    ctx.log.info({ adminId: accepted.admin.id }, 'invitation accepted');
    res.redirect(303, '/channels');
  });

  return router;
}

const HAS_ACCOUNT = {
  form: 'This address has an account: its own password signs in, not a new one.',
};

const viewOf = (invitation: OpenInvitation) => ({
  email: invitation.email,
  workspaceName: invitation.workspaceName,
  hasAccount: invitation.hasAccount,
});

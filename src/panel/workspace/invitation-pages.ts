import { Router, type Request, type Response } from 'express';
import { MIN_PASSWORD_LENGTH } from '../../auth/admins-service.js';
import type { OpenInvitation } from '../../auth/invitations-service.js';
import { sameSecret } from '../../platform/secrets.js';
import type { PanelServices } from '../panel-services.js';
import { requestSource } from '../login-pages.js';
import {
  clearCookie,
  loginFormToken,
  readCookie,
  setCookie,
  type PanelCookies,
} from '../cookies.js';
import {
  checkCsrf,
  formField,
  requireAdmin,
  resumeSignedIn,
  signedIn,
  type SignedIn,
} from '../panel-auth.js';

/** What the invitation page shows: who was invited where, and to whom it is shown. */
type InvitationView =
  | { state: 'invalid' }
  /** A new address: choosing a password creates the admin. */
  | { state: 'new_account'; invitation: OpenInvitation; errors?: Record<string, string> }
  /** An address with an account, nobody signed in: its owner signs in, then presses Join. */
  | { state: 'sign_in'; invitation: OpenInvitation; errors?: Record<string, string> }
  /** Its owner, signed in: the Join button. */
  | { state: 'join'; invitation: OpenInvitation }
  /** Another admin, signed in: nothing to press. */
  | { state: 'not_yours'; invitation: OpenInvitation };

/**
 * `/invitations/:token`: the one-time link an admin passed on. Opening it only shows a page (a
 * link preview or a scanner that fetches it uses nothing up). For a new address, choosing a
 * password there creates the admin, uses the link up and signs them in to the workspace. The
 * inviter may have kept the link, so it never signs anyone in to an account that exists, and
 * such an account joins only by its owner's consent: signed in as that address, they press Join.
 */
export function invitationPages(ctx: PanelServices, cookies: PanelCookies): Router {
  const router = Router();

  const show = (req: Request, res: Response, status: number, view: InvitationView) => {
    res.set('Cache-Control', 'no-store');
    res.set('Referrer-Policy', 'no-referrer');
    const invitation = 'invitation' in view ? view.invitation : undefined;
    res.status(status).render('invitation', {
      title: invitation ? `Join ${invitation.workspaceName}` : 'Invitation not valid',
      // The forms shown before a session exists (password, sign-in) carry the login cookie's token.
      formCsrf:
        view.state === 'new_account' || view.state === 'sign_in'
          ? loginFormToken(req, res, cookies)
          : undefined,
      minLength: MIN_PASSWORD_LENGTH,
      errors: {},
      path: `/invitations/${encodeURIComponent(String(req.params.token))}`,
      ...view,
    });
  };

  /** The page for an address with an account, as it is for whoever is signed in (if anyone). */
  const accountView = (invitation: OpenInvitation, viewer: SignedIn | undefined): InvitationView =>
    !viewer
      ? { state: 'sign_in', invitation }
      : viewer.admin.id === invitation.accountId
        ? { state: 'join', invitation }
        : { state: 'not_yours', invitation };

  router.get('/invitations/:token', async (req, res) => {
    const invitation = await ctx.invitations.open(String(req.params.token));
    if (!invitation) return show(req, res, 410, { state: 'invalid' });
    if (!invitation.accountId) return show(req, res, 200, { state: 'new_account', invitation });
    const view = accountView(invitation, await resumeSignedIn(ctx, cookies, req, res));
    show(req, res, view.state === 'not_yours' ? 403 : 200, view);
  });

  router.post('/invitations/:token', async (req, res) => {
    const token = String(req.params.token);
    const invitation = await ctx.invitations.open(token);
    if (!invitation) return show(req, res, 410, { state: 'invalid' });
    if (invitation.accountId)
      return show(req, res, 409, { state: 'sign_in', invitation, errors: HAS_ACCOUNT });
    const refuse = (status: number, errors: Record<string, string>) =>
      show(req, res, status, { state: 'new_account', invitation, errors });
    const expected = readCookie(req, cookies.login) ?? '';
    if (!expected || !sameSecret(formField(req.body, '_csrf'), expected))
      return refuse(403, { form: 'The form had expired. Please try again.' });
    const password = formField(req.body, 'password');
    if (password.length < MIN_PASSWORD_LENGTH)
      return refuse(400, { password: `must be at least ${MIN_PASSWORD_LENGTH} characters long` });
    if (password !== formField(req.body, 'confirm_password'))
      return refuse(400, { confirm_password: 'does not match' });

    const accepted = await ctx.invitations.accept(token, password);
    if (!accepted) return show(req, res, 410, { state: 'invalid' });
    if (accepted.kind === 'has_account')
      return show(req, res, 409, { state: 'sign_in', invitation, errors: HAS_ACCOUNT });
    const previous = readCookie(req, cookies.session);
    if (previous) await ctx.sessions.end(previous);
    // Their only workspace is the one they were invited to: the session opens it.
    const started = await ctx.sessions.start(accepted.admin, requestSource(req), 'invitation');
    setCookie(res, cookies, cookies.session, started.token);
    clearCookie(res, cookies, cookies.login);
    ctx.log.info({ adminId: accepted.admin.id }, 'invitation accepted');
    res.redirect(303, '/channels');
  });

  // The consent of an address with an account: its owner, signed in, presses Join.
  router.post(
    '/invitations/:token/join',
    requireAdmin(ctx, cookies),
    checkCsrf,
    async (req, res) => {
      const { session, admin } = signedIn(res);
      const token = String(req.params.token);
      const joined = await ctx.invitations.join(token, admin);
      if (!joined) return show(req, res, 410, { state: 'invalid' });
      if (joined.kind === 'not_invited') {
        const invitation = await ctx.invitations.open(token);
        if (!invitation) return show(req, res, 410, { state: 'invalid' });
        return show(req, res, 403, { state: 'not_yours', invitation });
      }
      await ctx.sessions.switchWorkspace(session, joined.workspaceId);
      await ctx.sessions.flash(session, {
        kind: 'ok',
        text: `You joined “${joined.workspaceName}”; it is open now.`,
      });
      ctx.log.info({ adminId: admin.id, workspaceId: joined.workspaceId }, 'invitation accepted');
      res.redirect(303, '/channels');
    },
  );

  return router;
}

const HAS_ACCOUNT = {
  form: 'This address has an account: sign in with its own password, then press Join.',
};

import type { Router } from 'express';
import { emailAddress } from '../../platform/email-address.js';
import { idRouter } from '../../platform/ids.js';
import { roleSchema } from '../../platform/roles.js';
import type { PanelServices } from '../panel-services.js';
import { formField, signedIn, workspaceId } from '../panel-auth.js';

const email = emailAddress('must be an e-mail address such as ada@example.com').max(320);

/** A role picked in a form; an empty field is the picker's default. */
const pickedRole = (body: unknown, fallback: 'editor' | 'owner') =>
  roleSchema.safeParse(formField(body, 'role') || fallback);

/**
 * `/workspace/admins`: who else may open the current workspace, and with which role. An owner
 * invites another by e-mail with a role and gets a one-time link, shown here once, valid 24
 * hours, to pass on.
 */
export function adminPages(ctx: PanelServices): Router {
  const router = idRouter();
  router.use((_req, res, next) => {
    res.locals.area = 'workspace';
    next();
  });

  router.post('/', async (req, res) => {
    const { session, admin } = signedIn(res);
    const parsed = email.safeParse(formField(req.body, 'email').trim());
    const role = pickedRole(req.body, 'editor');
    if (!parsed.success || !role.success) {
      const text = parsed.success
        ? 'The role must be one of owner, editor or viewer.'
        : `The e-mail address ${parsed.error.issues[0]?.message ?? 'is invalid'}.`;
      await ctx.sessions.flash(session, { kind: 'error', text });
      return res.redirect(303, '/workspace#admins');
    }
    // As the API does: a link, whether the address has an account or not. Nobody is added
    // before they open it and say so.
    const result = await ctx.invitations.invite(workspaceId(res), admin.id, parsed.data, role.data);
    ctx.log.info({ invitationId: result.invitation.id }, 'admin invited in the panel');
    // The link is in this answer only: its token is not stored, so it cannot be shown again.
    res.status(201).render('workspace/invited', {
      title: 'Admin invited',
      invitation: result.invitation,
      link: result.link,
    });
  });

  router.post('/:adminId/role', async (req, res) => {
    const { session } = signedIn(res);
    const role = pickedRole(req.body, 'editor');
    if (!role.success) {
      await ctx.sessions.flash(session, {
        kind: 'error',
        text: 'The role must be one of owner, editor or viewer.',
      });
      return res.redirect(303, '/workspace#admins');
    }
    const member = await ctx.invitations.setRole(workspaceId(res), req.params.adminId, role.data);
    await ctx.sessions.flash(session, {
      kind: 'ok',
      text: `${member.email} is now ${role.data === 'owner' ? 'an' : 'a'} ${role.data}.`,
    });
    res.redirect(303, '/workspace#admins');
  });

  router.post('/:adminId/remove', async (req, res) => {
    const { session, admin } = signedIn(res);
    await ctx.invitations.remove(workspaceId(res), req.params.adminId, admin.id);
    await ctx.sessions.flash(session, {
      kind: 'ok',
      text: 'Admin removed: they can no longer open this workspace.',
    });
    res.redirect(303, '/workspace#admins');
  });

  router.post('/invitations/:invitationId/cancel', async (req, res) => {
    await ctx.invitations.cancel(workspaceId(res), req.params.invitationId);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: 'Invitation cancelled: its link no longer works.',
    });
    res.redirect(303, '/workspace#admins');
  });

  return router;
}

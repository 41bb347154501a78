import { Router } from 'express';
import { MIN_PASSWORD_LENGTH } from '../../auth/admins-service.js';
import type { PanelServices } from '../panel-services.js';
import { formField, signedIn } from '../panel-auth.js';

/** `/account`: the signed-in admin's own settings. */
export function accountPages(ctx: PanelServices): Router {
  const router = Router();
  router.use((_req, res, next) => {
    res.locals.area = 'account';
    next();
  });

  router.get('/', (_req, res) => {
    res.render('account/show', { title: 'Account', errors: {} });
  });

  router.post('/password', async (req, res) => {
    const { session, admin } = signedIn(res);
    const next = formField(req.body, 'new_password');
    const errors: Record<string, string> = {};
    if (next.length < MIN_PASSWORD_LENGTH)
      errors.new_password = `must be at least ${MIN_PASSWORD_LENGTH} characters long`;
    else if (next !== formField(req.body, 'confirm_password'))
      errors.confirm_password = 'does not match the new password';
    else if (
      !(await ctx.admins.changePassword(admin.id, formField(req.body, 'current_password'), next))
    ) {
      errors.current_password = 'is not your current password';
    }
    if (Object.keys(errors).length)
      return res.status(400).render('account/show', { title: 'Account', errors });
    // Whoever knew the old password may be signed in elsewhere: those sessions end now.
    await ctx.sessions.endOthers(session);
    await ctx.sessions.flash(session, {
      kind: 'ok',
      text: 'Password changed. Your other sessions were signed out.',
    });
    res.redirect(303, '/account');
  });

  return router;
}

import type { Router } from 'express';
import { z } from 'zod';
import { emailAddress } from '../platform/email-address.js';
import { idRouter } from '../platform/ids.js';
import type { InvitationsService } from './invitations-service.js';

const invitationSchema = z.strictObject({
  email: emailAddress('must be an e-mail address such as ada@example.com').max(320),
});

/**
 * `/api/v1/admins` and `/api/v1/invitations`: who may open the workspace's panel, as its
 * Workspace page has them. An invitation's link is in the answer that makes it and nowhere else.
 */
export function adminsRoutes(invitations: InvitationsService): Router {
  const router = idRouter();

  router.get('/admins', async (_req, res) => {
    const members = await invitations.members(res.locals.workspaceId);
    res.json({ data: members.map(({ id, email }) => ({ id: String(id), email })) });
  });

  router.delete('/admins/:adminId', async (req, res) => {
    await invitations.removeKeepingOne(res.locals.workspaceId, req.params.adminId);
    res.status(204).end();
  });

  router.post('/invitations', async (req, res) => {
    const { email } = invitationSchema.parse(req.body);
    const { invitation, link } = await invitations.invite(res.locals.workspaceId, null, email);
    res.set('Cache-Control', 'no-store');
    res.status(201).json({
      id: String(invitation.id),
      email: invitation.email,
      url: link,
      expires_at: invitation.expiresAt.toISOString(),
    });
  });

  return router;
}

import type { Router } from 'express';
import { z } from 'zod';
import { emailAddress } from '../platform/email-address.js';
import { idRouter } from '../platform/ids.js';
import { roleSchema } from '../platform/roles.js';
import type { InvitationsService } from './invitations-service.js';

const invitationSchema = z.strictObject({
  email: emailAddress('must be an e-mail address such as ada@example.com').max(320),
  role: roleSchema.default('editor'),
});

const adminPatchSchema = z.strictObject({ role: roleSchema });

const toAdminObject = ({ id, email, role }: { id: string; email: string; role: string }) => ({
  id: String(id),
  email,
  role,
});

/**
 * `/api/v1/admins` and `/api/v1/invitations`: who may open the workspace's panel and with which
 * role, as its Workspace page has them. An invitation's link is in the answer that makes it and
 * nowhere else.
 */
export function adminsRoutes(invitations: InvitationsService): Router {
  const router = idRouter();

  router.get('/admins', async (_req, res) => {
    const members = await invitations.members(res.locals.workspaceId);
    res.json({ data: members.map(toAdminObject) });
  });

  router.patch('/admins/:adminId', async (req, res) => {
    const { role } = adminPatchSchema.parse(req.body);
    res.json(
      toAdminObject(await invitations.setRole(res.locals.workspaceId, req.params.adminId, role)),
    );
  });

  router.delete('/admins/:adminId', async (req, res) => {
    await invitations.removeMember(res.locals.workspaceId, req.params.adminId);
    res.status(204).end();
  });

  router.post('/invitations', async (req, res) => {
    const { email, role } = invitationSchema.parse(req.body);
    const { invitation, link } = await invitations.invite(
      res.locals.workspaceId,
      null,
      email,
      role,
    );
    res.set('Cache-Control', 'no-store');
    res.status(201).json({
      id: String(invitation.id),
      email: invitation.email,
      role: invitation.role,
      url: link,
      expires_at: invitation.expiresAt.toISOString(),
    });
  });

  return router;
}

import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import {
  ADMIN_ENV,
  PanelClient,
  inviteAdmin,
  invitationLink,
  unescapeHtml,
  useSignedInAdmin,
} from './panel-client.js';

const { app } = useTestApp({ env: ADMIN_ENV });
const owner = useSignedInAdmin(app);

beforeAll(async () => {
  expect((await owner.form('/workspaces', { name: 'Team' })).status).toBe(303);
});

const workspaceIdOf = async (name: string) =>
  (await app.ctx.db.query<{ id: string }>('select id from workspaces where name = $1', [name]))
    .rows[0]?.id as string;

describe('adding an admin to a workspace', () => {
  it('gives a new address a one-time link, valid 24 h, to join with a password of their own', async () => {
    const invited = await owner.form('/workspace/admins', { email: 'new@example.com' });
    expect(invited.status).toBe(201);
    const link = invitationLink(invited.text);
    expect(link).toMatch(new RegExp(`^${app.baseUrl}/invitations/[\\w-]{40,}$`));
    const token = link.split('/').pop() as string;
    const { rows } = await app.ctx.db.query<{ token_hash: string; hours: number }>(
      `select token_hash, extract(epoch from expires_at - created_at) / 3600 as hours
       from admin_invitations where email = 'new@example.com'`,
    );
    expect(Number(rows[0]?.hours)).toBeCloseTo(24, 3);
    expect(rows[0]?.token_hash).not.toContain(token);
    expect(unescapeHtml((await owner.page('/workspace')).text)).toContain('new@example.com');

    const guest = new PanelClient(app);
    const form = await guest.page(new URL(link).pathname);
    expect(form.status).toBe(200);
    expect(unescapeHtml(form.text)).toContain('Join Team');
    const joined = await guest.acceptInvitation(link, 'a password of mine');
    expect(joined.status).toBe(303);
    expect(joined.headers.location).toBe('/channels');
    expect(unescapeHtml((await guest.page('/channels')).text)).toContain('No channels in Team yet');

    // the link's secret is never logged, nor stored as it is
    expect(app.logText()).not.toContain(token);
    // the link is used up; the password works from now on
    expect((await new PanelClient(app).page(new URL(link).pathname)).status).toBe(410);
    expect(
      (await new PanelClient(app).signIn('new@example.com', 'a password of mine')).status,
    ).toBe(303);
    // they joined Team only
    const defaultId = await workspaceIdOf('Default workspace');
    expect((await guest.form('/workspace/switch', { workspace_id: defaultId })).status).toBe(404);
  });

  it('refuses an expired or cancelled link', async () => {
    const expired = invitationLink(
      (await owner.form('/workspace/admins', { email: 'late@example.com' })).text,
    );
    await app.ctx.db.query(
      `update admin_invitations set expires_at = now() - interval '1 second' where email = 'late@example.com'`,
    );
    const late = await new PanelClient(app).page(new URL(expired).pathname);
    expect(late.status).toBe(410);
    expect(late.text).toContain('This invitation cannot be used');
    expect((await new PanelClient(app).acceptInvitation(expired, 'any password')).status).toBe(410);

    const cancelled = invitationLink(
      (await owner.form('/workspace/admins', { email: 'maybe@example.com' })).text,
    );
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `select id from admin_invitations where email = 'maybe@example.com'`,
    );
    expect((await owner.form(`/workspace/admins/invitations/${rows[0]?.id}/cancel`)).status).toBe(
      303,
    );
    expect((await new PanelClient(app).page(new URL(cancelled).pathname)).status).toBe(410);
    const { rows: admins } = await app.ctx.db.query(
      `select 1 from admins where email in ('late@example.com', 'maybe@example.com')`,
    );
    expect(admins).toEqual([]);
  });

  it('gives an existing admin a link too, which adds them only once they press Join', async () => {
    const colleague = await inviteAdmin(owner, 'colleague@example.com', 'colleague password');
    expect((await owner.form('/workspaces', { name: 'Second team' })).status).toBe(303);
    const res = await owner.form('/workspace/admins', { email: 'COLLEAGUE@example.com' });
    expect(res.status).toBe(201);
    const path = new URL(invitationLink(res.text)).pathname;
    const secondId = await workspaceIdOf('Second team');
    expect((await colleague.form('/workspace/switch', { workspace_id: secondId })).status).toBe(
      404,
    );
    const page = await colleague.page(path);
    expect(unescapeHtml(page.text)).toContain('Join Second team</button>');
    expect((await colleague.form(`${path}/join`)).status).toBe(303);
    expect((await colleague.form('/workspace/switch', { workspace_id: secondId })).status).toBe(
      303,
    );
  });

  it('lets an admin remove another, but not themselves', async () => {
    const teamId = await workspaceIdOf('Team');
    await owner.form('/workspace/switch', { workspace_id: teamId });
    const leaving = await inviteAdmin(owner, 'leaving@example.com', 'leaving password');
    expect((await leaving.page('/channels')).status).toBe(200);
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `select id from admins where email in ('leaving@example.com', $1) order by email <> 'leaving@example.com'`,
      [ADMIN_ENV.ADMIN_EMAIL],
    );
    const [leavingId, ownerId] = rows.map((r) => r.id);
    expect((await owner.form(`/workspace/admins/${leavingId}/remove`)).status).toBe(303);
    // their only workspace is gone from their list
    const after = await leaving.page('/channels');
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/workspaces/new');
    expect(unescapeHtml((await owner.page('/workspace')).text)).not.toContain(
      'leaving@example.com',
    );

    const self = await owner.form(`/workspace/admins/${ownerId}/remove`);
    expect(self.status).toBe(409);
    expect((await owner.page('/channels')).status).toBe(200);
  });

  it('refuses an address that is not one', async () => {
    const res = await owner.form('/workspace/admins', { email: 'not an address' });
    expect(res.status).toBe(303);
    expect(unescapeHtml((await owner.page('/workspace')).text)).toContain(
      'The e-mail address must be an e-mail address',
    );
  });

  it('invites an address whose domain has no dot (ops@localhost)', async () => {
    const res = await owner.form('/workspace/admins', { email: 'ops@localhost' });
    expect(res.status).toBe(201);
    expect(invitationLink(res.text)).toMatch(/\/invitations\//);
  });
});

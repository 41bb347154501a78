import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import {
  ADMIN_ENV,
  PanelClient,
  inviteAdmin,
  unescapeHtml,
  useSignedInAdmin,
} from '../panel/panel-client.js';

const { app } = useTestApp({ env: ADMIN_ENV });
const owner = useSignedInAdmin(app);

let channelId: string;
let member: PanelClient;
let memberId: string;

/** The role the Admins list shows for this address. */
async function listedRole(email: string): Promise<string | undefined> {
  const html = (await owner.page('/workspace')).text;
  return new RegExp(`data-admin="${email.replace('.', '\\.')}" data-role="(\\w+)"`).exec(html)?.[1];
}

beforeAll(async () => {
  channelId = await owner.createChannel('Orders', 'Order {{order.id}}');
  member = await inviteAdmin(owner, 'sam@example.com', 'sam password', 'viewer');
  const admins = (await app.ctx.invitations.members(app.ctx.defaultWorkspaceId)) as {
    id: string;
    email: string;
  }[];
  memberId = String(admins.find((a) => a.email === 'sam@example.com')?.id);
});

describe('roles in the panel', () => {
  it('shows a viewer the channel without a way to change it, nor its reply secret', async () => {
    expect(await listedRole('sam@example.com')).toBe('viewer');
    const page = await member.page(`/channels/${channelId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="read-only-note"');
    expect(page.text).toContain('<fieldset class="read-only" disabled>');
    for (const action of ['disable', 'regenerate', 'delete', 'reply-secret/rotate', 'reply-url'])
      expect(page.text, action).not.toContain(`/channels/${channelId}/${action}"`);
    expect(page.text).not.toContain('data-live-preview');
    expect(page.text).not.toContain('id="reply-secret"');
    expect(page.text).toContain('id="reply-secret-hidden"');
    // the owner's page has them all
    const owners = await owner.page(`/channels/${channelId}`);
    expect(owners.text).toContain(`action="/channels/${channelId}/disable"`);
    expect(owners.text).toContain('id="reply-secret"');
    expect(owners.text).not.toContain('read-only-note');
  });

  it("hides a viewer's forms of the other areas, and refuses them posted by hand", async () => {
    const workspace = unescapeHtml((await member.page('/workspace')).text);
    expect(workspace).not.toContain('action="/workspace/admins"');
    expect(workspace).not.toContain('action="/workspace/api-keys"');
    expect(workspace).not.toContain('action="/workspace/reset-usage"');
    expect(workspace).toContain('Your role here is <strong>viewer</strong>');
    expect((await member.page('/providers')).text).not.toContain('action="/providers"');
    expect((await member.page('/alerts')).text).not.toContain('action="/alerts"');
    expect((await member.page('/channels')).text).not.toContain('href="/channels/new"');
    expect((await member.page('/channels/new')).status).toBe(403);

    for (const [path, needs] of [
      [`/channels/${channelId}`, 'editor'],
      ['/logs/replay', 'editor'],
      ['/providers', 'owner'],
      ['/workspace/api-keys', 'owner'],
      ['/workspace', 'owner'],
      [`/workspace/admins/${memberId}/role`, 'owner'],
    ] as const) {
      const res = await member.form(path, { name: 'Changed', role: 'owner', dry_run: 'false' });
      expect(res.status, path).toBe(403);
      expect(res.text, path).toContain(`This needs the ${needs} role in this workspace`);
    }
    expect(await listedRole('sam@example.com')).toBe('viewer');
  });

  it('lets an owner change a role on the Admins list, and an editor the channels but not the rest', async () => {
    const changed = await owner.form(`/workspace/admins/${memberId}/role`, { role: 'editor' });
    expect(changed.status).toBe(303);
    expect(await listedRole('sam@example.com')).toBe('editor');

    const page = await member.page(`/channels/${channelId}`);
    expect(page.text).toContain(`action="/channels/${channelId}/disable"`);
    expect(page.text).toContain('id="reply-secret"');
    const saved = await member.form(`/channels/${channelId}`, {
      name: 'Orders',
      template: 'Order {{order.id}} by an editor',
    });
    expect(saved.status).toBe(303);
    expect((await app.ctx.channels.get(app.ctx.defaultWorkspaceId, channelId)).template).toBe(
      'Order {{order.id}} by an editor',
    );
    expect((await member.page('/providers')).text).not.toContain('action="/providers"');
    const refused = await member.form('/providers', { name: 'mine', kind: 'echo' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('This needs the owner role in this workspace; yours is editor.');
  });

  it('gives invitations a role picker, and keeps the last owner', async () => {
    const workspace = (await owner.page('/workspace')).text;
    expect(workspace).toContain('<select id="admin_role" name="role">');
    const invited = await owner.form('/workspace/admins', {
      email: 'new@example.com',
      role: 'viewer',
    });
    expect(invited.status).toBe(201);
    expect((await owner.page('/workspace')).text).toMatch(
      /data-invitation="new@example.com">[\s\S]*?<td>viewer<\/td>/,
    );
    const badRole = await owner.form('/workspace/admins', { email: 'x@example.com', role: 'boss' });
    expect(badRole.status).toBe(303);
    expect((await owner.page('/workspace')).text).not.toContain('data-invitation="x@example.com"');

    const ownerId = (await app.ctx.invitations.members(app.ctx.defaultWorkspaceId)).find(
      (a) => a.email !== 'sam@example.com',
    )?.id;
    const demoted = await owner.form(`/workspace/admins/${ownerId}/role`, { role: 'viewer' });
    expect(demoted.status).toBe(409);
    expect(demoted.text).toContain('only owner');
  });
});

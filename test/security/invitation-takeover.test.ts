import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import {
  ADMIN_ENV,
  PanelClient,
  cookieSet,
  csrfIn,
  inviteAdmin,
  invitationLink,
  unescapeHtml,
} from '../panel/panel-client.js';

const { app } = useTestApp({ env: ADMIN_ENV });
/** The inviter who keeps a link after passing it on (or never passing it on). */
let keeper: PanelClient;

beforeAll(async () => {
  keeper = new PanelClient(app);
  await keeper.signIn();
  expect((await keeper.form('/workspaces', { name: 'Kept link' })).status).toBe(303);
});

/** An invitation from the keeper's current workspace; resolves to the one-time link. */
async function keptLink(email: string): Promise<string> {
  const invited = await keeper.form('/workspace/admins', { email });
  expect(invited.status).toBe(201);
  return invitationLink(invited.text);
}

/** The names of the workspaces an admin may open. */
async function workspacesOf(email: string): Promise<string[]> {
  const { rows } = await app.ctx.db.query<{ name: string }>(
    `select w.name from admin_workspaces m join workspaces w on w.id = m.workspace_id
     join admins a on a.id = m.admin_id where lower(a.email) = lower($1) order by lower(w.name)`,
    [email],
  );
  return rows.map((row) => row.name);
}

/** A second admin with a workspace of their own, who invites the same address there. */
async function anotherWorkspaceAdmin(email: string): Promise<PanelClient> {
  const other = await inviteAdmin(keeper, email, `${email} password`);
  expect((await other.form('/workspaces', { name: `${email}'s own` })).status).toBe(303);
  return other;
}

describe('an invitation link kept after its address got an account', () => {
  it('never signs its holder in as that admin, whatever password is typed', async () => {
    const link = await keptLink('victim@example.com');
    // the address gets an account through another workspace's invitation
    const other = await anotherWorkspaceAdmin('other@example.com');
    await inviteAdmin(other, 'victim@example.com', 'the victim password');
    expect(await workspacesOf('victim@example.com')).toEqual(["other@example.com's own"]);

    const holder = new PanelClient(app);
    for (const password of ['any password at all', 'the victim password']) {
      const used = await holder.acceptInvitation(link, password);
      expect(used.status).toBe(409);
      expect(cookieSet(used, 'hookprompt_session')).toBeUndefined();
      const channels = await holder.page('/channels');
      expect(channels.status).toBe(303);
      expect(channels.headers.location).toMatch(/^\/login/);
    }
    expect(await workspacesOf('victim@example.com')).toEqual(["other@example.com's own"]);
    // the link asks for the account's own sign-in instead
    const page = await holder.page(new URL(link).pathname);
    expect(page.status).toBe(200);
    expect(unescapeHtml(page.text)).toContain(
      '<strong>victim@example.com</strong> already has an account',
    );
  });

  it('joins the workspace once the owner signs in with their own password and presses Join', async () => {
    const link = await keptLink('owner@example.com');
    await app.ctx.admins.setPassword(
      'OWNER@example.com',
      'the owner password',
      (await app.ctx.workspaces.ensureDefault(1000)).id,
    );

    // a wrong password at the sign-in form the link shows adds nothing
    const guesser = new PanelClient(app);
    const page = await guesser.page(new URL(link).pathname);
    const guess = await guesser.agent
      .post('/login')
      .type('form')
      .send({ _csrf: csrfIn(page.text), email: 'owner@example.com', password: 'a guess' });
    expect(guess.status).toBe(401);
    expect(await workspacesOf('owner@example.com')).toEqual(['Default workspace']);

    const owner = new PanelClient(app);
    const form = await owner.page(new URL(link).pathname);
    expect(unescapeHtml(form.text)).toContain('Sign in with its password to join Kept link');
    const signedIn = await owner.agent
      .post('/login')
      .type('form')
      .send({
        _csrf: csrfIn(form.text),
        email: 'owner@example.com',
        password: 'the owner password',
      });
    expect(signedIn.status).toBe(303);
    // signing in adds nothing: back on the link's page, its owner presses Join
    expect(await workspacesOf('owner@example.com')).toEqual(['Default workspace']);
    const join = await owner.page(new URL(link).pathname);
    expect(
      (
        await owner.agent
          .post(`${new URL(link).pathname}/join`)
          .type('form')
          .send({ _csrf: csrfIn(join.text) })
      ).status,
    ).toBe(303);
    expect(await workspacesOf('owner@example.com')).toEqual(['Default workspace', 'Kept link']);
    expect(unescapeHtml((await owner.page('/channels')).text)).toContain(
      'No channels in Kept link yet',
    );
    // the link is used up
    expect((await new PanelClient(app).page(new URL(link).pathname)).status).toBe(410);
  });

  it('is not accepted at the owner’s next sign-in if they never open it', async () => {
    await keptLink('later@example.com');
    const other = await anotherWorkspaceAdmin('inviter@example.com');
    const later = await inviteAdmin(other, 'later@example.com', 'the later password');
    expect(await workspacesOf('later@example.com')).toEqual(["inviter@example.com's own"]);
    expect(
      (await new PanelClient(app).signIn('later@example.com', 'the later password')).status,
    ).toBe(303);
    expect(await workspacesOf('later@example.com')).toEqual(["inviter@example.com's own"]);
    // the session from before goes on as it was
    expect((await later.page('/channels')).status).toBe(200);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_ENV,
  PanelClient,
  csrfIn,
  invitationLink,
  inviteAdmin,
  unescapeHtml,
} from '../panel/panel-client.js';
import { useTestApp } from '../support/harness.js';

// The driver's key is the default workspace's: whoever holds it invites, as in the red team's
// finding, an admin of another workspace into theirs.
const { app, driver } = useTestApp({ env: ADMIN_ENV });
const PASSWORD = 'a password of their own';
/** The first admin, who makes the other admins' workspaces and passes their links on. */
let owner: PanelClient;

beforeAll(async () => {
  owner = new PanelClient(app);
  expect((await owner.signIn()).status).toBe(303);
});

/** An admin with an account whose first workspace is `workspace`, made as the panel does. */
async function adminOf(workspace: string, email: string): Promise<PanelClient> {
  expect((await owner.form('/workspaces', { name: workspace })).status).toBe(303);
  return inviteAdmin(owner, email, PASSWORD);
}

/** The names of the workspaces an admin may open, by name. */
async function workspacesOf(email: string): Promise<string[]> {
  const { rows } = await app.ctx.db.query<{ name: string }>(
    `select w.name from admin_workspaces m join workspaces w on w.id = m.workspace_id
     join admins a on a.id = m.admin_id where lower(a.email) = lower($1) order by lower(w.name)`,
    [email],
  );
  return rows.map((row) => row.name);
}

/** The workspace the panel has open: the one selected in the header's switcher. */
async function openWorkspace(client: PanelClient): Promise<string | undefined> {
  const page = await client.page('/account');
  expect(page.status).toBe(200);
  const selected = /<option value="\d+" selected>([^<]*)<\/option>/.exec(page.text)?.[1];
  return selected === undefined ? undefined : unescapeHtml(selected);
}

/** A fresh browser signed in with the admin's password. */
async function signIn(email: string): Promise<PanelClient> {
  const client = new PanelClient(app);
  expect((await client.signIn(email, PASSWORD)).status).toBe(303);
  return client;
}

const workspaceIdOf = async (name: string) =>
  (await app.ctx.db.query<{ id: string }>('select id from workspaces where name = $1', [name]))
    .rows[0]?.id as string;

const defaultAdmins = async () =>
  ((await driver.api('get', '/admins').expect(200)).body.data as { email: string }[]).map(
    (admin) => admin.email,
  );

/** The path of a link made through the API to the default workspace. */
async function apiInvitation(email: string): Promise<string> {
  const invited = await driver.api('post', '/invitations').send({ email });
  expect(invited.status).toBe(201);
  return new URL(invited.body.url as string).pathname;
}

/** The consent path: signed in through the link's page, then Join. Resolves to the browser. */
async function joinThroughLink(path: string, email: string): Promise<PanelClient> {
  const browser = new PanelClient(app);
  const page = await browser.page(path);
  expect(page.status).toBe(200);
  const signedIn = await browser.agent
    .post('/login')
    .type('form')
    .send({ _csrf: csrfIn(page.text), email, password: PASSWORD, next: path });
  expect(signedIn.status).toBe(303);
  expect(signedIn.headers.location).toBe(path);
  const joinPage = await browser.page(path);
  browser.csrf = csrfIn(joinPage.text);
  expect((await browser.form(`${path}/join`)).status).toBe(303);
  return browser;
}

describe('an invitation to an address that has an account', () => {
  it('adds nobody when its owner signs in, and her sign-in opens her own workspace', async () => {
    const ada = await adminOf("Ada's team", 'ada@example.com');
    await apiInvitation('ADA@example.com');

    const again = await signIn('ada@example.com');
    expect(await workspacesOf('ada@example.com')).toEqual(["Ada's team"]);
    expect(await openWorkspace(again)).toBe("Ada's team");
    expect(await openWorkspace(ada)).toBe("Ada's team");
    expect(await defaultAdmins()).not.toContain('ada@example.com');
    const defaultId = await workspaceIdOf('Default workspace');
    expect((await again.form('/workspace/switch', { workspace_id: defaultId })).status).toBe(404);
  });

  it('is what the panel’s Add admin makes too: a link, and no member', async () => {
    await adminOf("Bea's team", 'bea@example.com');
    const defaultId = await workspaceIdOf('Default workspace');
    expect((await owner.form('/workspace/switch', { workspace_id: defaultId })).status).toBe(303);

    const added = await owner.form('/workspace/admins', { email: 'bea@example.com' });
    expect(added.status).toBe(201);
    expect(invitationLink(added.text)).toMatch(/\/invitations\/[\w-]{40,}$/);
    // the page says nothing of whether the address has an account
    expect(unescapeHtml(added.text)).not.toContain('already had an account');
    expect(await workspacesOf('bea@example.com')).toEqual(["Bea's team"]);

    const bea = await signIn('bea@example.com');
    expect(await workspacesOf('bea@example.com')).toEqual(["Bea's team"]);
    expect(await openWorkspace(bea)).toBe("Bea's team");
    expect(await defaultAdmins()).not.toContain('bea@example.com');
  });

  it('joins when its owner, signed in, opens the link and presses Join', async () => {
    await adminOf("Cleo's team", 'cleo@example.com');
    const path = await apiInvitation('cleo@example.com');

    // signed out, the link asks for the account's own password, and signing in adds nothing
    const browser = new PanelClient(app);
    const page = await browser.page(path);
    expect(page.status).toBe(200);
    expect(unescapeHtml(page.text)).toContain(
      '<strong>cleo@example.com</strong> already has an account',
    );
    const signedIn = await browser.agent
      .post('/login')
      .type('form')
      .send({
        _csrf: csrfIn(page.text),
        email: 'cleo@example.com',
        password: PASSWORD,
        next: path,
      });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe(path);
    expect(await workspacesOf('cleo@example.com')).toEqual(["Cleo's team"]);
    expect(await openWorkspace(browser)).toBe("Cleo's team");

    // signed in, the link shows Join; opening it joins nothing
    const joinPage = await browser.page(path);
    expect(joinPage.status).toBe(200);
    expect(unescapeHtml(joinPage.text)).toContain('Join Default workspace</button>');
    expect(await workspacesOf('cleo@example.com')).toEqual(["Cleo's team"]);

    // a form without the session's token (another site posting it) is refused
    for (const csrf of ['', 'forged'.repeat(8)]) {
      const forged = await browser.agent
        .post(`${path}/join`)
        .set('Accept', 'text/html')
        .type('form')
        .send({ _csrf: csrf });
      expect(forged.status).toBe(403);
    }
    expect(await workspacesOf('cleo@example.com')).toEqual(["Cleo's team"]);

    browser.csrf = csrfIn(joinPage.text);
    const joined = await browser.form(`${path}/join`);
    expect(joined.status).toBe(303);
    expect(joined.headers.location).toBe('/channels');
    expect(await workspacesOf('cleo@example.com')).toEqual(["Cleo's team", 'Default workspace']);
    expect(unescapeHtml((await browser.page('/channels')).text)).toContain(
      'You joined “Default workspace”; it is open now.',
    );
    expect(await openWorkspace(browser)).toBe('Default workspace');
    expect(await defaultAdmins()).toContain('cleo@example.com');

    // the link's secret is never logged, wherever it went (sign-in's next, the Join form)
    expect(app.logText()).not.toContain(path.split('/').pop());
    // the link is used up
    expect((await new PanelClient(app).page(path)).status).toBe(410);
    expect((await browser.form(`${path}/join`)).status).toBe(410);
  });

  it('cannot be used by another admin who is signed in', async () => {
    await adminOf("Dan's team", 'dan@example.com');
    const eve = await adminOf("Eve's team", 'eve@example.com');
    const path = await apiInvitation('dan@example.com');

    const page = await eve.page(path);
    expect(page.status).toBe(403);
    expect(unescapeHtml(page.text)).toContain('This invitation is for someone else');
    expect(page.text).not.toContain(`action="${path}/join"`);
    const joined = await eve.form(`${path}/join`);
    expect(joined.status).toBe(403);
    expect(await workspacesOf('eve@example.com')).toEqual(["Eve's team"]);
    expect(await workspacesOf('dan@example.com')).toEqual(["Dan's team"]);

    // the link still works for the address it invites
    await joinThroughLink(path, 'dan@example.com');
    expect(await workspacesOf('dan@example.com')).toEqual(["Dan's team", 'Default workspace']);
  });
});

describe('signing in', () => {
  it('opens the workspace the admin last used', async () => {
    await adminOf("Fay's team", 'fay@example.com');
    const fay = await joinThroughLink(await apiInvitation('fay@example.com'), 'fay@example.com');
    // joining opened the workspace joined: the next sign-in opens it again
    expect(await openWorkspace(await signIn('fay@example.com'))).toBe('Default workspace');

    const own = await workspaceIdOf("Fay's team");
    expect((await fay.form('/workspace/switch', { workspace_id: own })).status).toBe(303);
    expect(await openWorkspace(await signIn('fay@example.com'))).toBe("Fay's team");

    // a workspace created is a workspace used
    expect((await fay.form('/workspaces', { name: "Fay's second" })).status).toBe(303);
    expect(await openWorkspace(await signIn('fay@example.com'))).toBe("Fay's second");

    // taken out of it, they sign in to the first workspace they had
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `select id from admins where email = 'fay@example.com'`,
    );
    const second = await workspaceIdOf("Fay's second");
    await app.ctx.db.query(
      'delete from admin_workspaces where admin_id = $1 and workspace_id = $2',
      [rows[0]?.id, second],
    );
    expect(await openWorkspace(await signIn('fay@example.com'))).toBe("Fay's team");
  });

  it('opens the first workspace the admin had while they have used none', async () => {
    // "Zed team" is listed after the default workspace, but it is the first one Gus had
    await adminOf('Zed team', 'gus@example.com');
    await joinThroughLink(await apiInvitation('gus@example.com'), 'gus@example.com');
    // as for an admin from before the panel kept the last workspace used
    await app.ctx.db.query(
      `update admins set last_workspace_id = null where email = 'gus@example.com'`,
    );
    expect(await openWorkspace(await signIn('gus@example.com'))).toBe('Zed team');
  });
});

import { CookieAccessInfo } from 'cookiejar';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useFixture, useTestApp } from '../support/harness.js';
import { OIDC_CLIENT_ID, OidcIdp } from '../support/oidc-idp.js';
import { ADMIN_EMAIL, ADMIN_ENV, PanelClient, cookieSet } from '../panel/panel-client.js';

const idp = useFixture(() => OidcIdp.start(() => `${app.baseUrl}/auth/oidc/callback`), {
  stop: (started) => started.close(),
});
const { app, driver } = useTestApp({
  env: () => ({
    ...ADMIN_ENV,
    ...idp.env(),
    OIDC_ALLOWED_DOMAINS: 'Allowed.example, other.example',
  }),
});

/**
 * Takes the browser from /auth/oidc/start through the identity provider, which signs `idp.user`
 * in; resolves to the callback URL the provider sends the browser back to (not yet opened).
 * `alter` changes the authorization request on its way, as a meddler could.
 */
async function throughIdp(
  client: PanelClient,
  alter?: (authorization: URL) => void,
  start = '/auth/oidc/start',
): Promise<URL> {
  const started = await client.page(start);
  expect(started.status).toBe(303);
  const url = new URL(started.headers.location as string);
  alter?.(url);
  return idp.authorize(url, app.baseUrl);
}

const openCallback = (client: PanelClient, url: URL) => client.page(url.pathname + url.search);

/** Whether the client's cookies sign it in to the panel. */
async function signedIn(client: PanelClient): Promise<boolean> {
  const res = await client.page('/channels');
  return res.status === 200;
}

const adminsNamed = async (email: string) =>
  (
    await app.ctx.db.query<{ id: string; password_hash: string | null }>(
      'select id, password_hash from admins where lower(email) = lower($1)',
      [email],
    )
  ).rows;

describe('sign-in with SSO', () => {
  it('offers "Sign in with SSO" beside the password form', async () => {
    const res = await request(app.baseUrl).get('/login?next=%2Flogs');
    expect(res.text).toContain('Sign in with SSO');
    expect(res.text).toContain('href="/auth/oidc/start?next=%2Flogs"');
    expect(res.text).toContain('name="password"');
  });

  it('sends the browser to the issuer with the code flow, PKCE S256, state, nonce and the scopes', async () => {
    const res = await new PanelClient(app).page('/auth/oidc/start');
    expect(res.status).toBe(303);
    const url = new URL(res.headers.location as string);
    expect(url.origin).toBe(idp.issuer);
    const params = Object.fromEntries(url.searchParams);
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: OIDC_CLIENT_ID,
      redirect_uri: `${app.baseUrl}/auth/oidc/callback`,
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(params.code_challenge).toMatch(/^[\w-]{43}$/);
    expect(params.state).toMatch(/^[\w-]{20,}$/);
    expect(params.nonce).toMatch(/^[\w-]{20,}$/);
    expect(cookieSet(res, 'hookprompt_oidc')).toBeTruthy();
  });

  it('signs an admin with an account in to it, back to the page they started from', async () => {
    idp.user = { email: ADMIN_EMAIL.toUpperCase(), email_verified: true, name: 'The Admin' };
    const client = new PanelClient(app);
    const callback = await throughIdp(client, undefined, '/auth/oidc/start?next=%2Flogs');
    const res = await openCallback(client, callback);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/logs');
    expect(cookieSet(res, 'hookprompt_session')).toBeTruthy();
    const channels = await client.page('/channels');
    expect(channels.status).toBe(200);
    expect(channels.text).toContain(ADMIN_EMAIL);
    expect(await adminsNamed(ADMIN_EMAIL)).toHaveLength(1);
  });

  it('makes an account in the first workspace for a new address of an allowed domain', async () => {
    idp.user = { email: 'new.person@allowed.example', email_verified: true, name: 'New Person' };
    const client = new PanelClient(app);
    const res = await openCallback(client, await throughIdp(client));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/channels');
    expect(await signedIn(client)).toBe(true);

    const [made] = await adminsNamed('new.person@allowed.example');
    expect(made?.password_hash).toBeNull();
    const { rows } = await app.ctx.db.query<{ workspace_id: string }>(
      'select workspace_id from admin_workspaces where admin_id = $1',
      [made?.id],
    );
    expect(rows.map((r) => r.workspace_id)).toEqual([app.ctx.defaultWorkspaceId]);
    // It lands with OIDC_DEFAULT_ROLE, a viewer unless set: it reads and changes nothing.
    const listed = await driver.api('get', '/admins').expect(200);
    expect(listed.body.data).toContainEqual(
      expect.objectContaining({ email: 'new.person@allowed.example', role: 'viewer' }),
    );
    expect((await client.page('/channels/new')).status).toBe(403);
    // No password was set, so none signs in with the form.
    const withPassword = await new PanelClient(app).signIn('new.person@allowed.example', '');
    expect(withPassword.status).not.toBe(303);

    // The second sign-in finds the account made by the first.
    const again = new PanelClient(app);
    expect((await openCallback(again, await throughIdp(again))).status).toBe(303);
    expect(await adminsNamed('new.person@allowed.example')).toHaveLength(1);
  });

  it('refuses a new address of another domain with a 403 page saying why: no session, no account', async () => {
    idp.user = { email: 'stranger@elsewhere.example', email_verified: true };
    const client = new PanelClient(app);
    const res = await openCallback(client, await throughIdp(client));
    expect(res.status).toBe(403);
    expect(res.text).toContain('stranger@elsewhere.example has no account here');
    expect(res.text).toContain('elsewhere.example');
    expect(cookieSet(res, 'hookprompt_session')).toBeUndefined();
    expect(await signedIn(client)).toBe(false);
    expect(await adminsNamed('stranger@elsewhere.example')).toHaveLength(0);
  });

  it('refuses an address the identity provider has not verified', async () => {
    idp.user = { email: ADMIN_EMAIL, email_verified: false };
    const client = new PanelClient(app);
    const res = await openCallback(client, await throughIdp(client));
    expect(res.status).toBe(403);
    expect(res.text).toContain('has not verified your e-mail address');
    expect(await signedIn(client)).toBe(false);
  });

  it('refuses a callback whose state was changed, and one opened in another browser', async () => {
    idp.user = { email: ADMIN_EMAIL, email_verified: true };
    const client = new PanelClient(app);
    const callback = await throughIdp(client);

    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const res = await openCallback(client, tampered);
    expect(res.status).toBe(400);
    expect(res.text).toContain('not started in this browser');
    expect(await signedIn(client)).toBe(false);

    const otherBrowser = new PanelClient(app);
    expect((await openCallback(otherBrowser, callback)).status).toBe(400);
    expect(await signedIn(otherBrowser)).toBe(false);

    // Neither used up the sign-in of the browser that started it.
    expect((await openCallback(client, callback)).status).toBe(303);
    expect(await signedIn(client)).toBe(true);
  });

  it('refuses a callback replayed with the same cookie, starting no second session', async () => {
    idp.user = { email: ADMIN_EMAIL, email_verified: true };
    const client = new PanelClient(app);
    const callback = await throughIdp(client);
    const kept = client.agent.jar.getCookie('hookprompt_oidc', CookieAccessInfo.All);
    expect(kept?.value).toMatch(/^[\w-]{40,}$/);
    const browserCookie = `hookprompt_oidc=${kept?.value}`;
    expect((await openCallback(client, callback)).status).toBe(303);

    const replay = await request(app.baseUrl)
      .get(callback.pathname + callback.search)
      .set('Accept', 'text/html')
      .set('Cookie', browserCookie);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already used');
    expect(cookieSet(replay, 'hookprompt_session')).toBeUndefined();
  });

  it('refuses an ID token whose nonce is not the one this sign-in sent', async () => {
    idp.user = { email: ADMIN_EMAIL, email_verified: true };
    const client = new PanelClient(app);
    const callback = await throughIdp(client, (authorization) =>
      authorization.searchParams.set('nonce', 'a-nonce-of-someone-else-entirely'),
    );
    const res = await openCallback(client, callback);
    expect(res.status).toBe(400);
    expect(res.text).toContain('did not pass the checks');
    expect(await signedIn(client)).toBe(false);
  });

  // Last in the file: it uses up this address's starts.
  it('limits the sign-ins one address starts (429 page)', async () => {
    const browser = request(app.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 301; i++)
      statuses.push((await browser.get('/auth/oidc/start').set('Accept', 'text/html')).status);
    const refused = statuses.filter((status) => status === 429);
    // Earlier tests of this file started some sign-ins too.
    expect(refused.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status === 303).length + refused.length).toBe(301);
    const last = await browser.get('/auth/oidc/start').set('Accept', 'text/html');
    expect(last.status).toBe(429);
    expect(last.text).toContain('Too many sign-ins were started from this address');
  });
});

import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';
import {
  ADMIN_EMAIL,
  ADMIN_ENV,
  ADMIN_PASSWORD,
  PanelClient,
  cookieSet,
  csrfIn,
  inlineCode,
} from './panel-client.js';

const { app } = useTestApp({ env: ADMIN_ENV });

const PAGES = [
  '/channels',
  '/channels/new',
  '/channels/1',
  '/channels/1/regenerate',
  '/channels/1/delete',
  '/logs',
  '/logs/1',
  '/workspace',
  '/workspaces/new',
  '/account',
];
const ACTIONS = [
  '/channels',
  '/channels/1',
  '/channels/1/preview',
  '/channels/1/test',
  '/channels/1/disable',
  '/channels/1/regenerate',
  '/channels/1/delete',
  '/workspace',
  '/workspace/reset-usage',
  '/workspace/api-keys',
  '/workspace/api-keys/1/revoke',
  '/workspace/switch',
  '/workspaces',
  '/account/password',
  '/logout',
];

describe('without a session', () => {
  it.each(PAGES)(
    'GET %s sends the browser to the sign-in page, coming back afterwards',
    async (path) => {
      const res = await request(app.baseUrl).get(path).set('Accept', 'text/html');
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`/login?next=${encodeURIComponent(path)}`);
    },
  );

  it.each(ACTIONS)('POST %s is refused with a redirect to sign in', async (path) => {
    const res = await request(app.baseUrl).post(path).type('form').send({ name: 'x' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login');
  });

  it('/ leads to the channels', async () => {
    const res = await request(app.baseUrl).get('/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/channels');
  });

  it('shows the sign-in form with email and password fields', async () => {
    const res = await request(app.baseUrl).get('/login');
    expect(res.status).toBe(200);
    expect(res.text).toContain('name="email"');
    expect(res.text).toContain('name="password"');
  });

  it('tells visitors no folder of the server', async () => {
    const res = await request(app.baseUrl).get('/login');
    expect(res.text).toContain('id="first-sign-in"');
    expect(res.text).not.toContain(app.ctx.config.dataDir);
  });
});

describe('signing in', () => {
  it('with the right password opens a session and lands on the channels', async () => {
    const client = new PanelClient(app);
    const res = await client.signIn();
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/channels');
    const page = await client.page('/channels');
    expect(page.status).toBe(200);
    expect(page.text).toContain(ADMIN_EMAIL);
  });

  it('accepts the e-mail address in any case', async () => {
    const res = await new PanelClient(app).signIn(ADMIN_EMAIL.toUpperCase());
    expect(res.status).toBe(303);
  });

  it('with a wrong password fails and opens no session', async () => {
    const client = new PanelClient(app);
    const res = await client.signIn(ADMIN_EMAIL, 'wrong password');
    expect(res.status).toBe(401);
    expect(res.text).toContain('Wrong e-mail address or password');
    expect(cookieSet(res, 'hookprompt_session')).toBeUndefined();
    expect((await client.page('/channels')).status).toBe(303);
  });

  it('with an unknown e-mail address fails the same way', async () => {
    const res = await new PanelClient(app).signIn('nobody@example.com', ADMIN_PASSWORD);
    expect(res.status).toBe(401);
    expect(res.text).toContain('Wrong e-mail address or password');
  });

  it('is refused without the sign-in form token (login CSRF)', async () => {
    const res = await request(app.baseUrl)
      .post('/login')
      .type('form')
      .send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    expect(res.status).toBe(403);
    expect(cookieSet(res, 'hookprompt_session')).toBeUndefined();
  });

  it('gives a new session id, never the one the browser came with', async () => {
    const planted = 'attacker-chosen-session-id-0123456789abcdef';
    const login = await request(app.baseUrl).get('/login');
    const loginCookie = `hookprompt_login=${cookieSet(login, 'hookprompt_login')}`;
    const res = await request(app.baseUrl)
      .post('/login')
      .set('Cookie', `${loginCookie}; hookprompt_session=${planted}`)
      .type('form')
      .send({ _csrf: csrfIn(login.text), email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    expect(res.status).toBe(303);
    const issued = cookieSet(res, 'hookprompt_session');
    expect(issued).toBeTruthy();
    expect(issued).not.toBe(planted);
  });

  it('again, from a browser already signed in, replaces the old session, which stops working', async () => {
    const first = cookieSet(await new PanelClient(app).signIn(), 'hookprompt_session');
    const login = await request(app.baseUrl).get('/login');
    const res = await request(app.baseUrl)
      .post('/login')
      .set(
        'Cookie',
        `hookprompt_login=${cookieSet(login, 'hookprompt_login')}; hookprompt_session=${first}`,
      )
      .type('form')
      .send({ _csrf: csrfIn(login.text), email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const second = cookieSet(res, 'hookprompt_session');
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    const withOld = await request(app.baseUrl)
      .get('/channels')
      .set('Cookie', `hookprompt_session=${first}`);
    expect(withOld.status).toBe(303);
    const withNew = await request(app.baseUrl)
      .get('/channels')
      .set('Cookie', `hookprompt_session=${second}`);
    expect(withNew.status).toBe(200);
  });

  it('is not offered again to a signed-in browser', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    const res = await client.page('/login?next=/logs');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/logs');
  });

  it('sets the session cookie HttpOnly and SameSite=Lax', async () => {
    const res = await new PanelClient(app).signIn();
    const line = (res.headers['set-cookie'] as unknown as string[]).find((c) =>
      c.startsWith('hookprompt_session='),
    );
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Lax/);
    expect(line).not.toMatch(/; Secure/);
  });

  it.each([
    ['https://evil.example/'],
    ['//evil.example/'],
    ['/\\evil.example/'],
    ['/.//evil.example/'],
    ['javascript:alert(1)'],
    ['http:evil.example'],
  ])('never redirects off-site, even with next=%s', async (next) => {
    const res = await new PanelClient(app).signIn(ADMIN_EMAIL, ADMIN_PASSWORD, next);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/channels');
  });

  it('goes back to the page that asked for it', async () => {
    const asked = await request(app.baseUrl).get('/logs?status=failed');
    const next = new URL(asked.headers.location as string, app.baseUrl).searchParams.get(
      'next',
    ) as string;
    const res = await new PanelClient(app).signIn(ADMIN_EMAIL, ADMIN_PASSWORD, next);
    expect(res.headers.location).toBe('/logs?status=failed');
  });
});

describe('a session', () => {
  it('ends at sign-out: its cookie no longer opens pages', async () => {
    const client = new PanelClient(app);
    const cookie = cookieSet(await client.signIn(), 'hookprompt_session');
    const res = await client.form('/logout');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login?signed_out=1');
    const after = await request(app.baseUrl)
      .get('/channels')
      .set('Cookie', `hookprompt_session=${cookie}`);
    expect(after.status).toBe(303);
    expect(after.headers.location).toMatch(/^\/login/);
  });

  it('expires', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    await app.ctx.db.query(`update admin_sessions set expires_at = now() - interval '1 second'`);
    const res = await client.page('/channels');
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/login/);
  });

  it('ends a week after sign-in however much it is used', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    await app.ctx.db.query(
      `update admin_sessions set created_at = now() - interval '7 days 1 minute'`,
    );
    expect((await client.page('/channels')).status).toBe(303);
  });
});

describe('CSRF', () => {
  it('refuses a form without the token, and changes nothing', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    const res = await client.agent
      .post('/channels')
      .set('Accept', 'text/html')
      .type('form')
      .send({ name: 'Sneaky', template: 'x' });
    expect(res.status).toBe(403);
    expect(res.text).toContain('Form expired');
    expect((await client.page('/channels')).text).not.toContain('Sneaky');
  });

  it('refuses a form with a wrong token', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    const res = await client.agent
      .post('/workspace/reset-usage')
      .type('form')
      .send({ _csrf: 'not-the-token' });
    expect(res.status).toBe(403);
  });

  it("refuses another session's token", async () => {
    const one = new PanelClient(app);
    const two = new PanelClient(app);
    await one.signIn();
    await two.signIn();
    const res = await one.agent
      .post('/channels')
      .type('form')
      .send({ _csrf: two.csrf, name: 'Cross', template: 'x' });
    expect(res.status).toBe(403);
  });

  it('refuses sign-out without the token', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    expect((await client.agent.post('/logout').type('form').send({})).status).toBe(403);
    expect((await client.page('/channels')).status).toBe(200);
  });
});

describe('page security headers', () => {
  it('has a strict CSP: no inline script or style, no framing', async () => {
    const res = await request(app.baseUrl).get('/login');
    const csp = res.headers['content-security-policy'] as string;
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
  });

  it('pages carry no inline script, event handler or style attribute', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    const id = await client.createChannel();
    for (const path of [
      '/channels',
      '/channels/new',
      `/channels/${id}`,
      `/channels/${id}/regenerate`,
      '/logs',
      '/workspace',
      '/account',
      '/workspaces/new',
    ]) {
      const res = await client.page(path);
      expect(res.status, path).toBe(200);
      expect(inlineCode(res.text), path).toEqual([]);
      expect(res.headers['cache-control'], path).toBe('no-store');
    }
    expect(inlineCode((await request(app.baseUrl).get('/login')).text)).toEqual([]);
  });

  it('serves the stylesheet, the script and the favicon', async () => {
    for (const [path, type] of [
      ['/static/panel.css', 'text/css'],
      ['/static/panel.js', 'javascript'],
      ['/static/favicon.svg', 'image/svg+xml'],
    ]) {
      const res = await request(app.baseUrl).get(path as string);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain(type);
    }
  });

  it('shows unknown pages as a 404 page', async () => {
    const client = new PanelClient(app);
    await client.signIn();
    const res = await client.page('/no-such-page');
    expect(res.status).toBe(404);
    expect(res.text).toContain('<title>Not found · hookprompt</title>');
  });
});

describe('over HTTPS', () => {
  // A second instance on the same database, behind an HTTPS address.
  const { app: secure } = useTestApp({
    env: { ...ADMIN_ENV, PUBLIC_BASE_URL: 'https://hooks.example.com' },
    database: () => app.database,
  });

  it('marks the cookies Secure, with the __Host- prefix', async () => {
    const login = await request(secure.baseUrl).get('/login');
    const loginCookie = cookieSet(login, '__Host-hookprompt_login');
    expect(loginCookie).toBeTruthy();
    const res = await request(secure.baseUrl)
      .post('/login')
      .set('Cookie', `__Host-hookprompt_login=${loginCookie}`)
      .type('form')
      .send({ _csrf: csrfIn(login.text), email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const line = (res.headers['set-cookie'] as unknown as string[]).find((c) =>
      c.startsWith('__Host-hookprompt_session='),
    );
    expect(line).toMatch(/; Secure/);
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; Path=\//);
    expect(res.headers['strict-transport-security']).toBeTruthy();
  });
});

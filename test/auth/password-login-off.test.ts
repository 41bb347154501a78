import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useFixture, useTestApp } from '../support/harness.js';
import { OidcIdp } from '../support/oidc-idp.js';
import {
  ADMIN_EMAIL,
  ADMIN_ENV,
  ADMIN_PASSWORD,
  PanelClient,
  cookieSet,
} from '../panel/panel-client.js';

const idp = useFixture(() => OidcIdp.start(() => `${app.baseUrl}/auth/oidc/callback`), {
  stop: (started) => started.close(),
});
const { app } = useTestApp({
  env: () => ({ ...ADMIN_ENV, ...idp.env(), OIDC_NAME: 'Acme Okta', PASSWORD_LOGIN: 'false' }),
});

describe('PASSWORD_LOGIN=false', () => {
  it('shows only "Sign in with" the identity provider on /login', async () => {
    const res = await request(app.baseUrl).get('/login');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Sign in with Acme Okta');
    expect(res.text).not.toContain('name="password"');
    expect(res.text).not.toContain('action="/login"');
  });

  it('refuses a posted password form, even with the right password', async () => {
    const browser = request.agent(app.baseUrl);
    const res = await browser
      .post('/login')
      .set('Accept', 'text/html')
      .type('form')
      .send({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    expect(res.status).toBe(403);
    expect(res.text).toContain('Sign in with Acme Okta instead');
    expect(cookieSet(res, 'hookprompt_session')).toBeUndefined();
    expect((await browser.get('/channels').set('Accept', 'text/html')).status).toBe(303);
  });

  it('still signs the admin in through the identity provider', async () => {
    idp.user = { email: ADMIN_EMAIL, email_verified: true };
    const client = new PanelClient(app);
    const start = new URL((await client.page('/auth/oidc/start')).headers.location as string);
    const url = await idp.authorize(start, app.baseUrl);
    expect((await client.page(url.pathname + url.search)).status).toBe(303);
    expect((await client.page('/channels')).status).toBe(200);
  });
});

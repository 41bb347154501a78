import { readFileSync } from 'node:fs';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/platform/config.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { OidcIdp } from '../support/oidc-idp.js';
import { ADMIN_EMAIL, ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { guideEnvBlocks } from './guide-runner.js';

// docs/guides/sso.md as a reader follows it: a provider's `.env` lines (Keycloak's, with the
// test's identity provider at the issuer, client id and secret the reader fills in), the
// redirect URL the page says to register there, and the password form turned off as its last
// section says. The other providers' lines are checked to make the settings the page names.

const PAGE = 'sso.md';
const text = readFileSync(`docs/guides/${PAGE}`, 'utf8');
const blocks = guideEnvBlocks(PAGE);
const keycloak = blocks.find((block) => block.OIDC_NAME === 'Keycloak') ?? {};
/** The redirect URL the page tells the reader to register, as a ``` block of its own. */
const redirectUrl = /^```\n(<PUBLIC_BASE_URL>\/\S+)\n```$/m.exec(text)?.[1] ?? '';

const idp = useFixture(
  () => OidcIdp.start(() => redirectUrl.replace('<PUBLIC_BASE_URL>', app.baseUrl)),
  { stop: (started) => started.close() },
);
const { app, driver } = useTestApp({
  env: () => ({
    ...ADMIN_ENV,
    ...keycloak,
    // what the reader fills in: the provider's address and the client registered there
    ...idp.env(),
    // "Turning the password form off"
    PASSWORD_LOGIN: 'false',
  }),
});

/** A browser that starts a sign-in on /login's button and opens the callback it is sent to. */
async function signInWithSso(email: string) {
  idp.user = { email, email_verified: true, name: email.split('@')[0] };
  const client = new PanelClient(app);
  const button = /href="(\/auth\/oidc\/start[^"]*)"/.exec((await client.page('/login')).text);
  const started = await client.page(button?.[1] ?? '/no-sso-button');
  expect(started.status).toBe(303);
  const callback = await idp.authorize(new URL(started.headers.location as string), app.baseUrl);
  const answer = await client.page(callback.pathname + callback.search);
  return { client, answer };
}

describe('the SSO guide, as a reader sets it up', () => {
  it("each provider's .env lines make the OpenID Connect settings the page lists", () => {
    expect(blocks.map((block) => block.OIDC_NAME)).toEqual([
      'Google',
      'Microsoft',
      'Okta',
      'Keycloak',
    ]);
    for (const block of blocks) {
      // the reader replaces the page's <placeholders> and … with their own values
      const filled = Object.fromEntries(
        Object.entries(block).map(([name, value]) => [
          name,
          value.replaceAll(/<[^>]+>/g, 'example').replaceAll('…', 'filled-in'),
        ]),
      );
      const config = parseConfig(filled);
      expect(config.oidc, block.OIDC_NAME).toEqual({
        issuer: filled.OIDC_ISSUER,
        clientId: filled.OIDC_CLIENT_ID,
        clientSecret: filled.OIDC_CLIENT_SECRET,
        name: filled.OIDC_NAME,
        allowedDomains: filled.OIDC_ALLOWED_DOMAINS?.split(','),
        defaultRole: 'viewer',
      });
    }
  });

  it('with the password form off, /login offers only "Sign in with Keycloak" and refuses a password', async () => {
    expect(text).toContain('`PASSWORD_LOGIN=false` leaves only the SSO button on `/login`');
    const login = await request(app.baseUrl).get('/login');
    expect(login.text).toContain('Sign in with Keycloak');
    expect(login.text).not.toContain('name="password"');
    const posted = await request(app.baseUrl)
      .post('/login')
      .set('Accept', 'text/html')
      .type('form')
      .send({ email: ADMIN_EMAIL, password: ADMIN_ENV.ADMIN_PASSWORD });
    expect(posted.status).toBe(403);
  });

  it('signs an admin in at the registered redirect URL, and makes a viewer of a new address of the allowed domain', async () => {
    const admin = await signInWithSso(ADMIN_EMAIL);
    expect(admin.answer.status).toBe(303);
    expect((await admin.client.page('/channels')).status).toBe(200);

    const newcomer = await signInWithSso('new.person@example.com');
    expect(newcomer.answer.status).toBe(303);
    expect((await newcomer.client.page('/channels')).status).toBe(200);
    const admins = (await driver.api('get', '/admins').expect(200)).body.data as unknown[];
    expect(admins).toContainEqual(
      expect.objectContaining({ email: 'new.person@example.com', role: 'viewer' }),
    );

    // an address of another domain has no account to sign in to
    const stranger = await signInWithSso('someone@elsewhere.example');
    expect(stranger.answer.status).toBe(403);
    expect((await stranger.client.page('/channels')).status).not.toBe(200);
  });
});

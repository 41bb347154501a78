import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useFixture, useTestApp } from '../support/harness.js';
import { OidcIdp } from '../support/oidc-idp.js';
import { ADMIN_EMAIL, ADMIN_ENV } from '../panel/panel-client.js';
import { NOT_RUN, hasChromium, launchChromium } from './browser.js';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

describe.skipIf(!hasChromium)('sign-in with SSO in a real browser', () => {
  // The provider shows its own development login and consent pages, as a real one would.
  const idp = useFixture(() => OidcIdp.start(() => `${app.baseUrl}/auth/oidc/callback`, true), {
    stop: (started) => started.close(),
  });
  const { app } = useTestApp({ env: () => ({ ...ADMIN_ENV, ...idp.env() }) });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    context = await browser.newContext({ baseURL: app.baseUrl });
    // Nothing leaves the machine (the provider's page asks a web font of Google).
    await context.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
    );
    page = await context.newPage();
  });

  it('clicks "Sign in with SSO", signs in at the identity provider and lands in the panel', async () => {
    idp.user = { email: ADMIN_EMAIL, email_verified: true, name: 'The Admin' };
    await page.goto('/login');
    await page.click('#sso-sign-in');

    await page.waitForURL(`${idp.issuer}/interaction/**`);
    await page.fill('input[name=login]', 'the-admin');
    await page.fill('input[name=password]', 'anything');
    await page.click('button[type=submit]');
    // The consent page: hookprompt asks for openid, email and profile.
    await Promise.all([page.waitForURL('**/channels'), page.click('button[type=submit]')]);

    expect(new URL(page.url()).origin).toBe(app.baseUrl);
    expect(await page.textContent('body')).toContain(ADMIN_EMAIL);
  });
});

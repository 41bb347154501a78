import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_ENV, ADMIN_PASSWORD } from '../panel/panel-client.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { NOT_RUN, hasChromium, launchChromium, watchForProblems } from './browser.js';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

describe.skipIf(!hasChromium)('the audit log in a real browser', () => {
  const { app, driver } = useTestApp({ env: ADMIN_ENV });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    await driver.createChannel({ name: 'Audited' });
    const context = await browser.newContext({ baseURL: app.baseUrl });
    page = await context.newPage();
    watchForProblems(page, problems);
  });

  it('opens from the Workspace page for an owner and filters by action', async () => {
    await page.goto('/login');
    await page.fill('input[name=email]', ADMIN_EMAIL);
    await page.fill('input[name=password]', ADMIN_PASSWORD);
    await Promise.all([page.waitForURL('**/channels'), page.click('button:has-text("Sign in")')]);

    await page.goto('/workspace');
    await Promise.all([page.waitForURL('**/audit'), page.click('#audit-link')]);
    const actions = await page
      .locator('#audit-entries tr[data-action]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-action')));
    expect(actions).toContain('channel.create');
    expect(actions).toContain('session.sign_in');

    await page.fill('input[name=action]', 'channel.create');
    await Promise.all([page.waitForURL('**/audit?*'), page.click('button:has-text("Apply")')]);
    const filtered = await page
      .locator('#audit-entries tr[data-action]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-action')));
    expect(filtered).toEqual(['channel.create']);
    expect(problems).toEqual([]);
  });
});

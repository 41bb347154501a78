import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { PanelClient } from '../panel/panel-client.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { NOT_RUN, hasChromium, launchChromium, watchForProblems } from './browser.js';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

const VIEWER = { email: 'viewer@example.com', password: 'a viewer password' };

describe.skipIf(!hasChromium)('a viewer in a real browser', () => {
  const { app, driver } = useTestApp();
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let page: Page;
  let channelId: string;
  const problems: string[] = [];

  beforeAll(async () => {
    channelId = (await driver.createChannel({ name: 'Orders' })).id;
    const invited = await driver
      .api('post', '/invitations')
      .send({ email: VIEWER.email, role: 'viewer' });
    expect(invited.status).toBe(201);
    const joined = await new PanelClient(app).acceptInvitation(invited.body.url, VIEWER.password);
    expect(joined.status).toBe(303);

    const context = await browser.newContext({ baseURL: app.baseUrl });
    page = await context.newPage();
    watchForProblems(page, problems);
    await page.goto('/login');
    await page.fill('input[name=email]', VIEWER.email);
    await page.fill('input[name=password]', VIEWER.password);
    await Promise.all([page.waitForURL('**/channels'), page.click('button:has-text("Sign in")')]);
  });

  it("shows no edit buttons on a channel's page, and refuses a form posted by hand", async () => {
    await page.goto(`/channels/${channelId}`);
    expect(await page.locator('#read-only-note').isVisible()).toBe(true);
    // Buttons that send a form, anywhere but the header (sign out, switch workspace): none shown.
    expect(await page.locator('main button[type=submit]:visible').count()).toBe(0);
    for (const text of ['Save', 'Disable channel', 'Regenerate URL…', 'Delete channel…'])
      expect(await page.locator(`main :text-is("${text}"):visible`).count(), text).toBe(0);
    // the template is there to read, but cannot be typed into
    expect(await page.locator('#template').isDisabled()).toBe(true);

    // The page itself made no request its role refuses (the live preview is off) and no error.
    expect(problems).toEqual([]);

    // The form posted by hand, with the session's own CSRF token from the page.
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const answer = await page.evaluate(
      async ({ id, token }) => {
        const res = await fetch(`/channels/${id}/disable`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' },
          body: new URLSearchParams({ _csrf: token }).toString(),
        });
        return { status: res.status, text: await res.text() };
      },
      { id: channelId, token: csrf },
    );
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('This needs the editor role in this workspace; yours is viewer.');
    expect((await driver.api('get', `/channels/${channelId}`)).body.enabled).toBe(true);
  });
});

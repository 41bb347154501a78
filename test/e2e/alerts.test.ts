import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useReplyReceiver, useFixture, useTestApp } from '../support/harness.js';
import { ADMIN_ENV } from '../panel/panel-client.js';
import {
  NOT_RUN,
  hasChromium,
  launchChromium,
  signedInPage,
  checkVisitedPages,
} from './browser.js';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

/** The Alerts page in a real browser: an alert made, tested and turned off from the panel. */
describe.skipIf(!hasChromium)('the Alerts page in a real browser', () => {
  const receiver = useReplyReceiver();
  const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true' } });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    page = await signedInPage(browser, app.baseUrl, problems);
  });

  it('makes an alert with only the chosen fields shown, tests it and turns it off', async () => {
    const channel = await driver.createChannel({ name: 'Shop orders' });
    await page.goto('/alerts');
    await page.getByRole('heading', { level: 2, name: 'Add an alert' }).waitFor();
    // "A delivery failed" and a webhook are picked first: only their fields are shown.
    expect(await page.isVisible('#alert-delivery_failed_after_attempts')).toBe(true);
    expect(await page.isVisible('#alert-failure_rate_threshold')).toBe(false);
    expect(await page.isVisible('#alert-notify_webhook_url')).toBe(true);
    expect(await page.isVisible('#alert-notify_slack_webhook_url')).toBe(false);

    await page.getByLabel('Name', { exact: true }).fill('Shop failing');
    await page
      .getByLabel('When', { exact: true })
      .selectOption({ label: 'Too many events failed' });
    expect(await page.isVisible('#alert-delivery_failed_after_attempts')).toBe(false);
    // The notify picker's fieldsets stay as they were: one picker does not hide the other's.
    expect(await page.isVisible('#alert-notify_webhook_url')).toBe(true);
    await page.locator('#alert-channel_id').selectOption({ label: 'Shop orders' });
    await page.getByLabel('Failed share at least (0–1: 0.25 is a quarter)').fill('0.25');
    await page.locator('#alert-failure_rate_window_s').fill('900');
    await page.getByLabel('Only with at least this many events').fill('10');
    await page.getByLabel('Hold for (seconds, 0–3,600)').fill('120');
    await page.getByLabel('URL (signed with the alert secret)').fill(receiver.url('/browser'));
    await page.getByRole('button', { name: 'Add alert' }).click();

    const row = page.locator('#alerts tbody tr', { hasText: 'Shop failing' });
    await row.waitFor();
    expect(await row.innerText()).toContain(
      'Failure rate ≥ 25% over 900 s (at least 10 events), channel “Shop orders”',
    );
    const { body } = await driver.api('get', '/alerts').expect(200);
    expect(body.data).toMatchObject([
      {
        name: 'Shop failing',
        for_s: 120,
        enabled: true,
        condition: {
          type: 'failure_rate',
          channel_id: channel.id,
          threshold: 0.25,
          window_s: 900,
          min_events: 10,
        },
        notify: { kind: 'webhook', url: receiver.url('/browser') },
      },
    ]);

    await row.getByRole('link', { name: 'Edit Shop failing' }).click();
    await page.getByRole('heading', { level: 1, name: 'Shop failing' }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('Test notification sent.').waitFor();
    expect(receiver.messages.at(-1)?.json).toMatchObject({
      type: 'alert.test',
      data: { test: true },
    });
    await page.getByRole('button', { name: 'Turn off' }).click();
    await page.getByRole('button', { name: 'Turn on' }).waitFor();
    expect((await driver.api('get', '/alerts').expect(200)).body.data[0].enabled).toBe(false);
    await checkVisitedPages(problems);
    expect(problems).toEqual([]);
  });
});

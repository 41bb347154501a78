import { mkdir } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useFixture, useTestApp } from '../support/harness.js';
import { ADMIN_EMAIL, ADMIN_ENV, ADMIN_PASSWORD } from '../panel/panel-client.js';
import {
  NOT_RUN,
  checkVisitedPages,
  collectVisits,
  hasChromium,
  launchChromium,
  sidewaysOverflow,
} from './browser.js';

const SCREENSHOTS = 'test-results';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

/** POSTs JSON from inside the page, as a script on the admin's machine would. */
async function postFromPage(page: Page, url: string, body: unknown): Promise<number> {
  return page.evaluate(
    async ({ url, body }) =>
      (
        await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).status,
    { url, body },
  );
}

/** A datetime-local value in UTC, as the Brain Logs filter reads it. */
const utcLocal = (date: Date) => date.toISOString().slice(0, 19);

describe.skipIf(!hasChromium)('the panel in a real browser', () => {
  const { app } = useTestApp({ env: ADMIN_ENV });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    context = await browser.newContext({
      baseURL: app.baseUrl,
      viewport: { width: 1280, height: 900 },
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    page = await context.newPage();
    // CSP violations and script errors show up here: the panel must produce none.
    page.on('console', (message) => {
      // Failed loads are checked by URL below: the webhook answers 403 and 404 on purpose.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    collectVisits(page, problems);
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().includes('/hooks/'))
        problems.push(`${response.status()} ${response.url()}`);
    });
  });

  let channelUrl = '';
  let eventId = '';

  it('signs in and lands on an empty channel list', async () => {
    await page.goto('/channels');
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.fill('input[name=email]', ADMIN_EMAIL);
    await page.fill('input[name=password]', ADMIN_PASSWORD);
    await Promise.all([page.waitForURL('**/channels'), page.click('button:has-text("Sign in")')]);
    expect(await page.textContent('h1')).toBe('Channels');
    expect(await page.textContent('.empty')).toContain('No channels in Default workspace yet');
  });

  it('creates a channel and copies its webhook URL', async () => {
    await Promise.all([
      page.waitForURL('**/channels/new'),
      page.click('text=Create your first channel'),
    ]);
    await page.fill('#name', 'Shop orders');
    await page.fill('#template', 'Order {{order.id}} for {{customer.name}}');
    await Promise.all([
      page.waitForURL(/\/channels\/\d+$/),
      page.click('button:has-text("Create channel")'),
    ]);
    expect(await page.textContent('.flash')).toContain('Channel “Shop orders” created');

    channelUrl = await page.inputValue('#webhook-url');
    expect(channelUrl).toMatch(new RegExp(`^${app.baseUrl}/hooks/[A-Za-z0-9_-]{32,}$`));
    await page.click('button:has-text("Copy URL")');
    await page.waitForSelector('button:has-text("Copied")');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(channelUrl);
  });

  it('receives an event sent with fetch and finds it in Brain Logs by time range', async () => {
    const before = new Date(Date.now() - 60_000);
    const status = await page.evaluate(async (url) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"order":{"id":4242,"total":1.50},"customer":{"name":"Ada"}}',
      });
      return { status: res.status, body: (await res.json()) as { event_id: string } };
    }, channelUrl);
    expect(status.status).toBe(200);
    eventId = status.body.event_id;

    await page.goto('/logs');
    await page.click('.more-filters > summary');
    await page.fill('#from', utcLocal(before));
    await page.fill('#to', utcLocal(new Date(Date.now() + 60_000)));
    await Promise.all([page.waitForURL(/\/logs\?/), page.click('button:has-text("Show events")')]);
    // The same instant, compared as one: the browser leaves out seconds that are 00.
    const from = new URL(page.url()).searchParams.get('from');
    expect(Date.parse(`${from}Z`)).toBe(Date.parse(`${utcLocal(before)}Z`));

    const event = page.locator(`#event-${eventId}`);
    expect(await event.locator('.c-channel').textContent()).toBe('Shop orders');
    // Opened beside the list: the payload, folded under the outcome, unfolds on a click.
    await event.locator('.row-link').click();
    const payload = page.locator('#event-detail #pretty-payload');
    await page.locator('#event-detail #payload-block > summary').click();
    expect(await payload.isVisible()).toBe(true);
    expect(await payload.textContent()).toBe(
      '{\n  "order": {\n    "id": 4242,\n    "total": 1.50\n  },\n  "customer": {\n    "name": "Ada"\n  }\n}',
    );

    // A time range that ends before the event leaves it out.
    await page.goto(`/logs?to=${encodeURIComponent(utcLocal(before))}`);
    expect(await page.locator(`#event-${eventId}`).count()).toBe(0);
  });

  it('previews an edited template, on request and live while typing', async () => {
    await page.goto('/channels');
    await Promise.all([page.waitForURL(/\/channels\/\d+$/), page.click('text=Shop orders')]);
    await page.fill('#template', 'Thank {{customer.name}} for order {{order.id}}');
    await page.fill('#sample', '{"order": {"id": 7}, "customer": {"name": "Grace"}}');
    await Promise.all([page.waitForURL(/\/preview$/), page.click('button:has-text("Preview")')]);
    expect(await page.textContent('#preview-output')).toBe('Thank Grace for order 7');

    await page.locator('#template').press('End');
    await page.locator('#template').pressSequentially(' ({{order.total}})');
    // panel.js refreshes the preview from the server while typing; wait for it, no click.
    await page.locator('#preview-output', { hasText: /^Thank Grace for order 7 \(\)$/ }).waitFor();
    expect(await page.textContent('#missing-placeholders')).toContain('{{order.total}}');

    await Promise.all([
      page.waitForURL(/\/preview$/),
      page.click('button:has-text("Use last received payload")'),
    ]);
    expect(await page.textContent('#preview-output')).toBe('Thank Ada for order 4242 (1.50)');

    await Promise.all([page.waitForURL(/\/channels\/\d+$/), page.click('button:has-text("Save")')]);
    expect(await page.textContent('.flash')).toBe('Channel saved.');
    await page.screenshot({ path: `${SCREENSHOTS}/channels-editor.png`, fullPage: true });
  });

  it('moves between the editor’s sections by its tabs, each an in-page link', async () => {
    const tabs = page.locator('nav[aria-label="Channel sections"] a');
    // In the order of the sections on the page.
    expect(await tabs.allTextContents()).toEqual([
      'Template',
      'AI',
      'Filter',
      'Versions',
      'Where replies go',
      'Senders',
      'Sending events',
    ]);
    // Without JS the tabs are plain anchors: each names a section of this page.
    const hrefs = await tabs.evaluateAll((links) => links.map((link) => link.getAttribute('href')));
    const targets = await Promise.all(hrefs.map((href) => page.locator(href ?? '#none').count()));
    expect(targets).toEqual([1, 1, 1, 1, 1, 1, 1]);
    await page.click('nav[aria-label="Channel sections"] a:has-text("Where replies go")');
    const current = page.locator('nav[aria-label="Channel sections"] a[aria-current="location"]');
    await current.waitFor();
    expect(await current.allTextContents()).toEqual(['Where replies go']);
    expect(new URL(page.url()).hash).toBe('#replies');
    expect(await page.locator('#replies-heading').isVisible()).toBe(true);
    // The heading jumped to is below the sticky tabs, not under them.
    const nav = await page.locator('nav[aria-label="Channel sections"]').boundingBox();
    const heading = await page.locator('#replies-heading').boundingBox();
    expect(heading?.y ?? 0).toBeGreaterThanOrEqual((nav?.y ?? 0) + (nav?.height ?? 0));
    await page.click('nav[aria-label="Channel sections"] a:has-text("Filter")');
    await current.filter({ hasText: 'Filter' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#filter');
    expect(await current.allTextContents()).toEqual(['Filter']);
    expect(await page.locator('#accept_when').isVisible()).toBe(true);
    // The schema box is there only for replies in a schema.
    expect(await page.isVisible('#ai_json_schema')).toBe(false);
    await page.selectOption('#ai_response_format', 'json_schema');
    expect(await page.isVisible('#ai_json_schema')).toBe(true);
    await page.selectOption('#ai_response_format', '');
    expect(await page.isVisible('#ai_json_schema')).toBe(false);
  });

  it('chooses who may send: the guide follows the scheme picked, and unsigned requests get 401', async () => {
    await page.selectOption('#scheme', 'github');
    expect(await page.getAttribute('.scheme-guide-item.current', 'data-scheme')).toBe('github');
    // Only the chosen scheme's guide is shown.
    const guides = page.locator('.scheme-guide-item');
    const shown = await guides.evaluateAll((items) =>
      items.filter((item) => item.getClientRects().length > 0).map((item) => item.dataset.scheme),
    );
    expect(shown).toEqual(['github']);
    await page.fill('#secret', 'e2e-github-secret');
    await Promise.all([
      page.waitForURL(/\/channels\/\d+(#who-may-send)?$/),
      page.click('button:has-text("Save sender settings")'),
    ]);
    expect(await page.textContent('.flash')).toContain('Sender settings saved');
    expect(await page.getAttribute('#secret', 'placeholder')).toContain('A secret is set');
    expect(await postFromPage(page, channelUrl, { order: { id: 8 } })).toBe(401);
    await page.locator('#who-may-send').screenshot({ path: `${SCREENSHOTS}/who-may-send.png` });

    await page.selectOption('#scheme', 'none');
    await Promise.all([
      page.waitForURL(/\/channels\/\d+(#who-may-send)?$/),
      page.click('button:has-text("Save sender settings")'),
    ]);
    expect(await postFromPage(page, channelUrl, { order: { id: 9 } })).toBe(200);
  });

  it('regenerates the URL: the old one answers 404, the new one works', async () => {
    await Promise.all([page.waitForURL(/\/regenerate$/), page.click('text=Regenerate URL…')]);
    expect(await page.textContent('.notice')).toContain('The current URL stops working at once.');
    await Promise.all([
      page.waitForURL(/\/channels\/\d+$/),
      page.click('button:has-text("Regenerate URL")'),
    ]);
    const newUrl = await page.inputValue('#webhook-url');
    expect(newUrl).not.toBe(channelUrl);
    expect(await postFromPage(page, channelUrl, { order: { id: 1 } })).toBe(404);
    expect(await postFromPage(page, newUrl, { order: { id: 2 } })).toBe(200);
    channelUrl = newUrl;
  });

  it('disables the channel: senders get 403', async () => {
    await Promise.all([
      page.waitForURL(/\/channels\/\d+$/),
      page.click('button:has-text("Disable channel")'),
    ]);
    expect(await page.textContent('h1 .badge')).toBe('Disabled');
    expect(await postFromPage(page, channelUrl, { order: { id: 3 } })).toBe(403);

    await page.goto('/logs');
    const rejected = page.locator('.event-row', { has: page.locator('.badge-rejected') }).first();
    await rejected.locator('.row-link').click();
    expect(await page.locator('#event-detail #refusal').textContent()).toContain(
      'Refused: the channel is disabled',
    );
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs.png`, fullPage: true });
  });

  it('fits a phone screen', async () => {
    const phone = await browser.newPage({
      baseURL: app.baseUrl,
      viewport: { width: 390, height: 844 },
      isMobile: true,
    });
    await phone.context().addCookies(await context.cookies());
    await phone.goto('/channels');
    const overflow = await sidewaysOverflow(phone);
    expect(overflow).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: `${SCREENSHOTS}/channels-phone.png`, fullPage: true });
    await phone.close();
  });

  it('raised no script error and no CSP violation', async () => {
    await checkVisitedPages(problems);
    expect(problems).toEqual([]);
  });
});

import { mkdir } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { ADMIN_ENV } from '../panel/panel-client.js';
import {
  NOT_RUN,
  hasChromium,
  launchChromium,
  sidewaysOverflow,
  signIn,
  watchForProblems,
  checkVisitedPages,
} from './browser.js';

const SCREENSHOTS = 'test-results';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

describe.skipIf(!hasChromium)('Brain Logs for operators in a real browser', () => {
  const { app, driver } = useTestApp({ env: ADMIN_ENV });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let context: BrowserContext;
  let page: Page;
  let channel: ChannelJson;
  const problems: string[] = [];
  const sent: Record<string, string> = {};

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    channel = await driver.createChannel({
      name: 'Shop',
      template: 'Order {{order.id}} is {{order.status}}',
    });
    for (const [id, status] of [
      [1, 'paid'],
      [2, 'open'],
      [3, 'paid'],
    ] as const) {
      const res = await driver.sendEvent(channel.webhook_url, { order: { id, status } });
      sent[`order${id}`] = res.body.event_id as string;
    }
    await createWorker(app.ctx).runOnce();

    context = await browser.newContext({
      baseURL: app.baseUrl,
      viewport: { width: 1280, height: 900 },
    });
    page = await context.newPage();
    watchForProblems(page, problems);
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn(page);
  });

  const listedIds = () =>
    page.$$eval('#event-list .event-row', (rows) => rows.map((row) => row.dataset.eventId));

  it('searches by payload path and by free text', async () => {
    await page.goto('/logs');
    await page.fill('#search', 'order.status = paid');
    await Promise.all([page.waitForURL(/search=/), page.press('#search', 'Enter')]);
    expect(await listedIds()).toEqual([sent.order3, sent.order1]);
    expect(await page.textContent('.event-count')).toMatch(/^2 events match$/);

    await page.fill('#search', 'ORDER 2 IS OPEN');
    await Promise.all([page.waitForURL(/search=/), page.press('#search', 'Enter')]);
    expect(await listedIds()).toEqual([sent.order2]);
    await Promise.all([page.waitForURL(/\/logs$/), page.click('#clear-filters')]);
    expect(await listedIds()).toHaveLength(3);
  });

  it('draws the events-per-hour chart with the filter’s numbers', async () => {
    await page.goto('/logs');
    await page.click('#volume > summary');
    // Browser code as text: this file is compiled without the DOM's types.
    await page.waitForFunction('Boolean(document.getElementById("volume-chart").chart)');
    const chart = (await page.evaluate(`
      document.getElementById('volume-chart').chart.data.datasets.map((set) => ({
        label: set.label,
        sum: set.data.reduce((a, b) => a + b, 0),
      }))
    `)) as { label: string; sum: number }[];
    expect(chart).toEqual([{ label: 'replied', sum: 3 }]);
    expect(await page.textContent('[data-status-total="replied"]')).toBe('3');
    const box = await page.locator('#volume-chart').boundingBox();
    expect(box?.height).toBeGreaterThan(50);
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-chart.png`, fullPage: true });
  });

  it('shows a new event and its reply live, without a reload', async () => {
    await page.goto('/logs');
    await page.evaluate('window.marker = 42');
    const counted = async (selector: string) => Number(await page.textContent(selector));
    const inRange = await counted('#volume-total');
    const replied = await counted('[data-status-total="replied"]');
    await page.click('#live-toggle');
    expect(await page.getAttribute('#live-toggle', 'aria-pressed')).toBe('true');
    // The stream is open once the server has a subscriber for it.
    await expect.poll(() => app.ctx.eventsFeed['subscribers'].size).toBe(1);

    const res = await driver.sendEvent(channel.webhook_url, { order: { id: 77, status: 'paid' } });
    const id = res.body.event_id as string;
    const row = page.locator(`#event-${id}`);
    await row.waitFor();
    expect(await listedIds().then((ids) => ids[0])).toBe(id);
    expect(await row.getAttribute('data-status')).toBe('pending');
    // The chart follows: one more event in range.
    await expect.poll(() => counted('#volume-total')).toBe(inRange + 1);

    await createWorker(app.ctx).runOnce();
    await page.locator(`#event-${id}[data-status="replied"]`).waitFor();
    expect(await row.locator('.c-status .badge').textContent()).toBe('Replied');
    await expect.poll(() => counted('[data-status-total="replied"]')).toBe(replied + 1);
    expect(await page.evaluate('window.marker')).toBe(42);
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-live.png`, fullPage: true });
    await page.click('#live-toggle');
  });

  it('asks for confirmation with the dry-run count before a bulk replay', async () => {
    await page.goto(`/logs?search=${encodeURIComponent('order.status = paid')}`);
    await Promise.all([page.waitForURL(/\/logs\/replay/), page.click('text=Replay…')]);
    expect(await page.getAttribute('#replay-count', 'data-count')).toBe('3');
    expect(await page.textContent('#replay-count')).toContain(
      '3 events will be sent to the AI again',
    );
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-replay-confirm.png`, fullPage: true });
    await Promise.all([page.waitForURL(/\/logs\?search=/), page.click('#confirm-replay')]);
    expect(await page.textContent('.flash')).toBe('3 events sent to the AI again.');
    expect(await page.locator('#event-list .badge-pending').count()).toBe(3);
    await createWorker(app.ctx).runOnce();
  });

  it('opens the event page with everything, and uses its payload as the editor’s sample', async () => {
    await page.goto(`/logs/${sent.order1}`);
    expect(await page.textContent('h1')).toContain(`Event #${sent.order1}`);
    expect(await page.textContent('#pretty-payload')).toContain('"status": "paid"');
    expect(await page.textContent('#prompt')).toBe('Order 1 is paid');
    expect(await page.locator('#history li').count()).toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/event-page.png`, fullPage: true });

    await Promise.all([page.waitForURL(/\/logs\/\d+$/), page.click('#replay-event')]);
    expect(await page.textContent('.flash')).toContain('sent to the AI again');

    await Promise.all([page.waitForURL(/sample_event=/), page.click('#use-as-sample')]);
    expect(await page.inputValue('#sample')).toBe('{"order":{"id":1,"status":"paid"}}');
    expect(await page.textContent('#preview-output')).toBe('Order 1 is paid');
  });

  it('shows a 24 h sparkline per channel with refused and failed counts', async () => {
    await page.goto('/channels');
    await page.waitForFunction('Boolean(document.querySelector("canvas.sparkline")?.chart)');
    const counts = await page.textContent(`[data-channel-day="${channel.id}"]`);
    expect(counts?.replace(/\s+/g, ' ').trim()).toBe('4 total · 0 refused · 0 failed');
  });

  it('fits a 390 px phone: the header takes two rows, never scrolls sideways, the first event shows at once', async () => {
    const phone = await browser.newPage({
      baseURL: app.baseUrl,
      viewport: { width: 390, height: 844 },
      isMobile: true,
    });
    await phone.context().addCookies(await context.cookies());
    await phone.goto('/logs');
    const header = await phone.locator('.site-header').boundingBox();
    const brand = await phone.locator('.brand').boundingBox();
    expect(header?.height).toBeLessThan((brand?.height ?? 0) * 3 + 24);
    const first = await phone.locator('#event-list .event-row').first().boundingBox();
    expect((first?.y ?? 9999) + (first?.height ?? 0)).toBeLessThanOrEqual(844);
    const overflow = await sidewaysOverflow(phone);
    expect(overflow).toBeLessThanOrEqual(0);
    await phone.screenshot({ path: `${SCREENSHOTS}/brain-logs-phone.png` });
    await phone.close();
  });

  it('shows the event’s thread on its page, the event marked, each one a link', async () => {
    const support = await driver.createChannel({
      name: 'Support',
      template: 'Customer says {{text}}',
      ai: { thread_key: '{{customer}}' },
    });
    const ids: string[] = [];
    for (const text of ['first question', 'second question', 'third question']) {
      const res = await driver.sendEvent(support.webhook_url, { customer: 'ada', text });
      ids.push(res.body.event_id as string);
    }
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);

    await page.goto(`/logs/${ids[1]}`);
    const rows = page.locator('#thread .thread-event');
    const threadIds = await page.$$eval('#thread .thread-event', (items) =>
      items.map((item) => item.dataset.eventId),
    );
    expect(threadIds).toEqual([...ids].reverse());
    expect(await page.getAttribute('#thread [aria-current="page"]', 'href')).toBe(
      `/logs/${ids[1]}`,
    );
    expect(await rows.nth(2).locator('.thread-preview').textContent()).toContain(
      'Customer says first question',
    );
    await page.screenshot({ path: `${SCREENSHOTS}/event-page-thread.png`, fullPage: true });

    await Promise.all([
      page.waitForURL(`**/logs/${ids[2]}`),
      page.click(`#thread a[href="/logs/${ids[2]}"]`),
    ]);
    expect(await page.textContent('h1')).toContain(`Event #${ids[2]}`);
    await Promise.all([page.waitForURL(/thread=ada/), page.click('#thread-logs')]);
    expect(await listedIds()).toEqual([...ids].reverse());
  });

  it('raised no script error and no CSP violation', async () => {
    await checkVisitedPages(problems);
    expect(problems).toEqual([]);
  });
});

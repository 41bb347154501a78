import { mkdir, writeFile } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { useFixture, useReplyReceiver, useTestApp } from '../support/harness.js';
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

// Screenshots for the change's description go outside the repository when that folder exists.
const SCREENSHOTS = process.env.SCREENSHOTS_DIR ?? 'test-results';
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const EVENTS = 50;

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

describe.skipIf(!hasChromium)('Brain Logs as an operator’s console, in a real browser', () => {
  const { app, driver } = useTestApp({
    env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true', DELIVERY_RETRY_SCHEDULE: '5ms' },
  });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  // Where the attempts test's channel delivers its replies.
  const receiver = useReplyReceiver();
  let context: BrowserContext;
  let page: Page;
  let channel: ChannelJson;
  let refusedId: string;
  const problems: string[] = [];

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    channel = await driver.createChannel({ name: 'Shop', template: 'Order {{order.id}} paid' });
    for (let id = 1; id < EVENTS; id++)
      await driver.sendEvent(channel.webhook_url, { order: { id, note: 'x'.repeat(400) } });
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);
    const refused = await driver.sendEvent(channel.webhook_url, '{"order": ', {
      contentType: 'application/json',
    });
    expect(refused.status).toBe(400);
    const events = await driver.eventsOf(channel.id);
    refusedId = String(events[events.length - 1]?.id);

    context = await browser.newContext({ baseURL: app.baseUrl, viewport: DESKTOP });
    page = await context.newPage();
    // The editor's refused save is a 400 page, as it should be: not a problem of the page.
    watchForProblems(page, problems, (text) => text.includes('status of 400'));
    await signIn(page);
  });

  /** Rows whose whole line is on the screen without scrolling. */
  const rowsAboveTheFold = (target: Page, height: number) =>
    target.$$eval(
      '#event-list .event-row',
      (rows, bottom) => rows.filter((row) => row.getBoundingClientRect().bottom <= bottom).length,
      height,
    );
  const listedIds = () =>
    page.$$eval('#event-list .event-row', (rows) => rows.map((row) => row.dataset.eventId));
  const currentRow = () =>
    page.$eval('#event-list .event-row[aria-current="true"]', (row) => row.dataset.eventId);

  it('shows a dozen events or more above the fold at 1440×900, each with its outcome, and weighs little', async () => {
    // A fresh context: nothing cached, every byte of the page, its styles and scripts counted.
    const cold = await browser.newContext({ baseURL: app.baseUrl, viewport: DESKTOP });
    await cold.addCookies(await context.cookies());
    const first = await cold.newPage();
    const bytes = new Map<string, number>();
    const sizing: Promise<unknown>[] = [];
    first.on('requestfinished', (request) => {
      // A request that ends as the context closes (the live tail's stream) has no size to read.
      sizing.push(
        request.sizes().then(
          (sizes) => bytes.set(request.url(), sizes.responseBodySize),
          () => undefined,
        ),
      );
    });
    await first.goto('/logs');
    await first.waitForLoadState('load');
    const measured = (await first.evaluate(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const paint = performance.getEntriesByType('paint').find((p) => p.name === 'first-contentful-paint');
      return {
        domNodes: document.getElementsByTagName('*').length,
        serverMs: Math.round(nav.responseStart - nav.requestStart),
        firstContentfulPaintMs: Math.round(paint ? paint.startTime : -1),
        htmlBytesUncompressed: nav.decodedBodySize,
      };
    })()`)) as Record<string, number>;
    await expect.poll(() => bytes.size).toBeGreaterThanOrEqual(5);
    await Promise.all(sizing);
    // Chart.js is fetched only when the folded chart is opened, and drawn then.
    const chartJsFetched = () =>
      [...bytes.keys()].some((url) => url.endsWith('/vendor/chart.umd.js'));
    expect(chartJsFetched()).toBe(false);
    await first.click('#volume > summary');
    // (This context keeps the CSP, under which waitForFunction's string cannot be evaluated.)
    await expect
      .poll(() => first.evaluate('Boolean(document.getElementById("volume-chart").chart)'))
      .toBe(true);
    await expect.poll(chartJsFetched).toBe(true);
    await cold.close();

    await page.goto('/logs');
    expect(await rowsAboveTheFold(page, DESKTOP.height)).toBeGreaterThanOrEqual(12);
    const refusedRow = page.locator(`#event-${refusedId}`);
    expect(await refusedRow.locator('.c-status').textContent()).toContain('Rejected 400');
    expect(await refusedRow.locator('.c-outcome').textContent()).toBe('invalid json');
    const replied = page.locator('#event-list .event-row[data-status="replied"]').first();
    expect(await replied.locator('.c-outcome').textContent()).toMatch(/\S/);
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-1440.png` });

    const withoutChartJs = [...bytes]
      .filter(([url]) => !url.endsWith('/vendor/chart.umd.js'))
      .reduce((sum, [, size]) => sum + size, 0);
    const report = {
      events: (await listedIds()).length,
      files: bytes.size,
      transferredBytesWithoutChartJs: withoutChartJs,
      ...measured,
      rowsAboveTheFold1440: await rowsAboveTheFold(page, DESKTOP.height),
    };
    console.log(`hookprompt Brain Logs weight: ${JSON.stringify(report)}`);
    await writeFile(`${SCREENSHOTS}/brain-logs-weight.json`, JSON.stringify(report, null, 2));
    expect(report.events).toBe(EVENTS);
    expect(withoutChartJs).toBeLessThanOrEqual(60 * 1024);
  });

  it('opens an event beside the list on a click, outcome first, and keeps the list', async () => {
    await page.goto('/logs');
    const ids = (await listedIds()) as string[];
    await page.click(`#event-${ids[1]} .row-link`);
    const detail = page.locator('#event-detail');
    await page.locator(`#event-detail [data-event-id="${ids[1]}"]`).waitFor();
    expect(page.url()).toMatch(/\/logs$/);
    expect(await currentRow()).toBe(ids[1]);
    expect(await detail.locator('#reply').textContent()).toMatch(/\S/);
    // Outcome first: the reply is above the prompt, the payload and the headers (collapsed).
    const order = (await page.$$eval('#event-detail #reply, #event-detail .input-block', (nodes) =>
      nodes.map((node) => node.id),
    )) as string[];
    expect(order[0]).toBe('reply');
    expect(await detail.locator('#headers-block').getAttribute('open')).toBeNull();
    const listBox = await page.locator('#event-list').boundingBox();
    const detailBox = await detail.boundingBox();
    expect((detailBox?.x ?? 0) >= (listBox?.x ?? 0) + (listBox?.width ?? 0)).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-detail-1440.png` });
  });

  it('moves through the list with j and k, opens with Enter, closes with Escape', async () => {
    await page.goto('/logs');
    const ids = (await listedIds()) as string[];
    await page.focus(`#event-${ids[0]} .row-link`);
    await page.keyboard.press('Enter');
    await page.locator(`#event-detail [data-event-id="${ids[0]}"]`).waitFor();
    await page.keyboard.press('j');
    await page.locator(`#event-detail [data-event-id="${ids[1]}"]`).waitFor();
    await page.keyboard.press('j');
    await page.locator(`#event-detail [data-event-id="${ids[2]}"]`).waitFor();
    expect(await currentRow()).toBe(ids[2]);
    await page.keyboard.press('k');
    await page.locator(`#event-detail [data-event-id="${ids[1]}"]`).waitFor();
    expect(await currentRow()).toBe(ids[1]);
    expect(
      await page.evaluate('document.activeElement.closest(".event-row").dataset.eventId'),
    ).toBe(ids[1]);
    // Typing j in the search box is typing, not moving.
    await page.fill('#search', 'j');
    expect(await currentRow()).toBe(ids[1]);
    await page.focus(`#event-${ids[1]} .row-link`);
    await page.keyboard.press('Escape');
    expect(await page.locator('#event-detail').isHidden()).toBe(true);
  });

  it('shows a refusal in red with what the sender was told', async () => {
    await page.goto('/logs');
    await page.click(`#event-${refusedId} .row-link`);
    const refusal = page.locator('#event-detail #refusal');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('HTTP 400');
    expect(await refusal.textContent()).toContain('Refused: the body is not valid JSON');
    // Browser code as text: this file is compiled without the DOM's types.
    const colour = await page.evaluate(
      `getComputedStyle(document.querySelector('#event-detail #refusal')).color`,
    );
    expect(colour).toBe('rgb(138, 28, 18)'); // the error notice's red
  });

  it('without JavaScript, a row is a link to the event page', async () => {
    const plain = await browser.newContext({
      baseURL: app.baseUrl,
      viewport: DESKTOP,
      javaScriptEnabled: false,
    });
    await plain.addCookies(await context.cookies());
    const noScript = await plain.newPage();
    await noScript.goto('/logs');
    await Promise.all([
      noScript.waitForURL(`**/logs/${refusedId}`),
      noScript.click(`#event-${refusedId} .row-link`),
    ]);
    expect(await noScript.textContent('h1')).toContain(`Event #${refusedId}`);
    await noScript.screenshot({ path: `${SCREENSHOTS}/event-page-refused-1440.png` });
    await noScript.goto(`/logs/${Number(refusedId) - 1}`);
    await noScript.screenshot({
      path: `${SCREENSHOTS}/event-page-replied-1440.png`,
      fullPage: true,
    });
    await plain.close();
  });

  it('filters the list by the bar clicked in the chart', async () => {
    await page.goto('/logs');
    await page.click('#volume > summary');
    await page.waitForFunction('Boolean(document.getElementById("volume-chart").chart)');
    // The chart resizes itself to its box once the opened section is laid out: the bars are
    // where they will be clicked only when its size is the canvas's.
    await page.waitForFunction(`(() => {
      const canvas = document.getElementById('volume-chart');
      const box = canvas.getBoundingClientRect();
      return Math.abs(canvas.chart.width - box.width) < 1 && Math.abs(canvas.chart.height - box.height) < 1;
    })()`);
    // The centre of the newest hour's replied bar, in page coordinates.
    const point = (await page.evaluate(`(() => {
      const canvas = document.getElementById('volume-chart');
      const chart = canvas.chart;
      const set = chart.data.datasets.findIndex((d) => d.label === 'replied');
      const bars = chart.getDatasetMeta(set).data;
      const bar = bars[bars.length - 1];
      const box = canvas.getBoundingClientRect();
      const count = chart.data.datasets[set].data[bars.length - 1];
      return { x: box.left + bar.x, y: box.top + (bar.y + bar.base) / 2, count };
    })()`)) as { x: number; y: number; count: number };
    await Promise.all([page.waitForURL(/status=replied/), page.mouse.click(point.x, point.y)]);
    expect(new URL(page.url()).searchParams.get('from')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00$/);
    expect(await page.title()).toContain('Replied');
    const statuses = await page.$$eval('#event-list .event-row', (rows) =>
      rows.map((row) => row.dataset.status),
    );
    expect(statuses.length).toBe(point.count);
    expect(new Set(statuses)).toEqual(new Set(['replied']));
  });

  it('fits a 390 px phone without sideways scrolling, rows on two lines', async () => {
    const phone = await browser.newPage({ baseURL: app.baseUrl, viewport: PHONE, isMobile: true });
    await phone.context().addCookies(await context.cookies());
    for (const [path, name] of [
      ['/logs', 'brain-logs'],
      [`/logs/${refusedId}`, 'event-page-refused'],
      [`/logs/${Number(refusedId) - 1}`, 'event-page-replied'],
      ['/channels', 'channels'],
    ] as const) {
      await phone.goto(path);
      await phone.screenshot({ path: `${SCREENSHOTS}/${name}-390-full.png`, fullPage: true });
      const overflow = await sidewaysOverflow(phone);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await phone.goto('/logs');
    // The failure groups start folded on a phone (open on a wide screen), their count in view.
    const failuresOpen = (target: Page) =>
      target.locator('#failures').evaluate((box) => box.hasAttribute('open'));
    expect(await failuresOpen(phone)).toBe(false);
    expect(await phone.locator('#failures > summary').textContent()).toMatch(/\d+ in range/);
    await page.goto('/logs');
    expect(await failuresOpen(page)).toBe(true);
    const visible = await rowsAboveTheFold(phone, PHONE.height);
    console.log(`hookprompt Brain Logs rows above the fold at 390×844: ${visible}`);
    expect(visible).toBeGreaterThanOrEqual(8);
    await phone.screenshot({ path: `${SCREENSHOTS}/brain-logs-390.png` });
    await phone.close();
  });

  it('shows every error of the channel editor at once, at the top, each linked to its field', async () => {
    await page.goto(`/channels/${channel.id}`);
    await page.fill('#ai_temperature', 'hot');
    await page.fill('#ai_max_tokens', '-5');
    await page.fill('#ai_history', 'many');
    await page.locator('#editor button.primary:has-text("Save")').last().click();
    await page.locator('#error-summary').waitFor();
    const box = await page.locator('#error-summary').boundingBox();
    expect(box?.y ?? 9999).toBeLessThan(DESKTOP.height);
    expect(await page.evaluate('document.activeElement.id')).toBe('error-summary');
    const links = await page.$$eval('#error-summary a', (anchors) =>
      anchors.map((a) => a.getAttribute('href')),
    );
    expect(links.sort()).toEqual(['#ai_history', '#ai_max_tokens', '#ai_temperature']);
    for (const field of ['#ai_temperature', '#ai_max_tokens', '#ai_history']) {
      expect(await page.getAttribute(field, 'aria-invalid')).toBe('true');
      const border = await page.evaluate(
        `getComputedStyle(document.querySelector('${field}')).borderTopColor`,
      );
      expect(border).toBe('rgb(180, 35, 24)'); // --bad
    }
    await page.click('#error-summary a[href="#ai_max_tokens"]');
    expect(page.url()).toMatch(/#ai_max_tokens$/);
    await page.screenshot({ path: `${SCREENSHOTS}/channel-editor-errors-1440.png` });
    await page.setViewportSize(PHONE);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: `${SCREENSHOTS}/channel-editor-errors-390.png` });
    await page.setViewportSize(DESKTOP);
  });

  it('masks the reply secret, with Show and Copy beside it', async () => {
    await page.goto(`/channels/${channel.id}`);
    const secret = page.locator('#reply-secret');
    expect(await secret.getAttribute('type')).toBe('password');
    const show = page.locator('[data-reveal="#reply-secret"]');
    await show.click();
    expect(await secret.getAttribute('type')).toBe('text');
    expect(await secret.inputValue()).toMatch(/^whsec_/);
    expect(await show.textContent()).toBe('Hide');
    await show.click();
    expect(await secret.getAttribute('type')).toBe('password');
    const copy = page.locator('[data-copy="#reply-secret"]');
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await secret.getAttribute('type')).toBe('password');
  });

  it('shows only the sender fields of the chosen verification scheme', async () => {
    await page.goto(`/channels/${channel.id}`);
    const shown = async () => {
      const fields = ['secret', 'header', 'encoding', 'tolerance_s'];
      const visible = await Promise.all(fields.map((id) => page.isVisible(`#${id}`)));
      return fields.filter((_id, i) => visible[i]);
    };
    expect(await shown()).toEqual([]);
    await page.selectOption('#scheme', 'github');
    expect(await shown()).toEqual(['secret']);
    await page.selectOption('#scheme', 'hmac-sha256');
    expect(await shown()).toEqual(['secret', 'header', 'encoding']);
    await page.selectOption('#scheme', 'stripe');
    expect(await shown()).toEqual(['secret', 'tolerance_s']);
    await page
      .locator('#who-may-send')
      .screenshot({ path: `${SCREENSHOTS}/senders-stripe-1440.png` });
  });

  it('lists only the events whose delivery failed when a delivery failure group is clicked', async () => {
    const notifier = await driver.createChannel({ name: 'Notifier', template: 'Note {{n}}' });
    // A reply URL set straight in the database: no delivery worker runs here, nothing is sent.
    await app.ctx.db.query(
      `insert into destinations (channel_id, role, kind, url)
       values ($1, 'reply_url', 'webhook', 'https://example.invalid/hook')`,
      [notifier.id],
    );
    const sent: string[] = [];
    for (let n = 1; n <= 5; n++)
      sent.push((await driver.sendEvent(notifier.webhook_url, { n })).body.event_id as string);
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);
    // Two of the five messages failed, as the delivery worker leaves them after the last attempt.
    const failed = [sent[1], sent[3]] as string[];
    await app.ctx.db.query(
      `update deliveries set state = case when event_id = any($2::bigint[]) then 'failed' else 'delivered' end
       where channel_id = $1`,
      [notifier.id, failed],
    );
    await page.goto('/logs');
    const group = page.locator(
      `#failures li[data-channel-id="${notifier.id}"][data-destination-id="reply_url"] a`,
    );
    expect(await group.textContent()).toMatch(/delivery to the reply URL failed\s*×2/);
    await Promise.all([page.waitForURL(/delivery=failed/), group.click()]);
    expect(await page.title()).toContain('Notifier · Delivery failed · to the reply URL');
    expect(((await listedIds()) as string[]).sort()).toEqual(failed.sort());
    expect(await page.inputValue('#delivery')).toBe('failed');
    expect(await page.inputValue('#delivery_to')).toBe('reply_url');
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-delivery-failed-1440.png` });
  });

  it("shows in red a row whose Slack message failed while its reply URL's was delivered", async () => {
    const alerting = await driver.createChannel({
      name: 'Alerting',
      template: 'Alert {{n}}',
      reply_delivery: { url: 'https://example.invalid/hook' },
      destinations: [{ kind: 'slack', token: 'xoxb-e2e-token', channel: 'alerts' }],
    });
    const id = (await driver.sendEvent(alerting.webhook_url, { n: 1 })).body.event_id as string;
    const worker = createWorker(app.ctx);
    while ((await worker.runOnce()) > 0);
    // As the delivery worker leaves them (none runs here): the reply URL's delivered, Slack's failed.
    await app.ctx.db.query(
      `update deliveries set state = case when destination_id is null then 'delivered' else 'failed' end
       where event_id = $1`,
      [id],
    );
    await page.goto(`/logs?channel=${alerting.id}`);
    const badge = page.locator(`#event-${id} .c-delivery .badge`);
    expect(await badge.textContent()).toBe('1 of 2 failed');
    expect(await badge.getAttribute('title')).toBe(
      'Reply URL: Delivered\nSlack #alerts: Delivery failed',
    );
    // Drawn in the panel's colour for what went wrong, as a failed event's status is.
    // Browser code as text: this file is compiled without the DOM's types.
    const colours = (await page.evaluate(`(() => {
      const probe = document.createElement('span');
      probe.style.color = 'var(--bad)';
      document.body.append(probe);
      const bad = getComputedStyle(probe).color;
      probe.remove();
      const cell = document.querySelector('#event-${id} .c-delivery .badge');
      return { text: getComputedStyle(cell).color, bad };
    })()`)) as { text: string; bad: string };
    expect(colours.bad).toBe('rgb(180, 35, 24)'); // --bad: the panel's red
    expect(colours.text).toBe(colours.bad);
    expect(await page.content()).not.toContain('xoxb-e2e-token');
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-targets-failed-1440.png` });
  });

  it("shows each reply attempt's target and answer within the detail pane, and on a phone", async () => {
    const replying = await driver.createChannel({
      name: 'Replies',
      template: 'Order {{order.id}}',
    });
    const url = receiver.url(`/replies/${'segment-'.repeat(30)}end?token=t0k3n-abcdefgh`);
    await driver.updateChannel(replying.id, { reply_delivery: { url } });
    receiver.enqueue(
      { status: 500, body: JSON.stringify({ error: 'unbroken'.repeat(90) }) },
      { status: 200, body: 'Stored as reply r-42' },
    );
    const sent = await driver.sendEvent(replying.webhook_url, { order: { id: 1 } });
    const id = String(sent.body.event_id);
    await createWorker(app.ctx).runOnce();
    await eventually(async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const event = await driver.api('get', `/events/${id}`);
      return event.body.delivery?.status === 'delivered';
    });

    /** How far the attempts table, or the page, reach past what holds them (px). */
    const overflow = (target: Page, holder: string) =>
      target.$eval(holder, (box) => {
        const wrap = box.querySelector('.delivery-attempts')?.closest('.table-wrap');
        if (!wrap) return Number.POSITIVE_INFINITY;
        return Math.max(
          wrap.scrollWidth - wrap.clientWidth,
          wrap.getBoundingClientRect().right - box.getBoundingClientRect().right,
          // as the phone test above measures the page (the layout viewport)
          box.ownerDocument.documentElement.scrollWidth -
            box.ownerDocument.documentElement.clientWidth,
        );
      });
    await page.goto('/logs');
    await page.click(`#event-${id} .row-link`);
    const detail = page.locator('#event-detail');
    await page.locator(`#event-detail [data-event-id="${id}"]`).waitFor();
    expect(await detail.locator('.attempt-target').textContent()).toContain('/replies/segment-');
    expect(await detail.textContent()).not.toContain('t0k3n-abcdefgh');
    expect(await detail.locator('.attempt-answer').count()).toBe(2);
    // collapsed (a preview of the long answer), then opened
    expect(await overflow(page, '#event-detail')).toBeLessThanOrEqual(0);
    await detail.locator('.answer-excerpt > summary').click();
    expect(await overflow(page, '#event-detail')).toBeLessThanOrEqual(0);
    await detail.locator('.delivery-attempts').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENSHOTS}/brain-logs-attempts-1440.png` });

    const phone = await browser.newPage({
      baseURL: app.baseUrl,
      viewport: PHONE,
      isMobile: true,
    });
    await phone.context().addCookies(await context.cookies());

    await phone.goto(`/logs/${id}`);
    expect(await overflow(phone, 'main')).toBeLessThanOrEqual(0);
    await phone.locator('.answer-excerpt > summary').click();
    expect(await overflow(phone, 'main')).toBeLessThanOrEqual(0);
    await phone.locator('.delivery-attempts').scrollIntoViewIfNeeded();
    await phone.screenshot({ path: `${SCREENSHOTS}/event-page-attempts-390.png` });
    await phone.close();
  });

  it('raised no script error and no CSP violation', async () => {
    await checkVisitedPages(problems);
    expect(problems).toEqual([]);
  });
});

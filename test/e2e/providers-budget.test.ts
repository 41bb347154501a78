import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useFakeAi, useFakeAnthropic, useFixture, useTestApp } from '../support/harness.js';
import { ADMIN_ENV } from '../panel/panel-client.js';
import { databaseDump, foundIn } from '../secrets/secret-forms.js';
import {
  NOT_RUN,
  hasChromium,
  launchChromium,
  signedInPage,
  checkVisitedPages,
} from './browser.js';

const SCREENSHOTS = 'test-results';
const BACKUP_KEY = 'sk-proj-backup-e2e-4b7c1d9e2f3a5b6c7d8e';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

/**
 * Issue 39's "done when", walked in the panel: a channel answering through the Anthropic kind,
 * falling back to a second provider when the first is overloaded (529), Brain Logs showing both
 * calls and the cost, and the workspace stopping at its budget.
 */
describe.skipIf(!hasChromium)('providers, fallbacks, cost and budget in a real browser', () => {
  // Two providers the panel adds (none is the server's own).
  const anthropic = useFakeAnthropic();
  const openai = useFakeAi();
  const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, PROVIDERS_ALLOW_PRIVATE: 'true' } });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let page: Page;
  let channel: ChannelJson;
  const problems: string[] = [];

  beforeAll(async () => {
    channel = await driver.createChannel({ name: 'Support', template: 'Customer: {{text}}' });
    // Prices of the two models, USD per million tokens.
    for (const [model, input, output] of [
      ['claude-fake', 3, 15],
      ['gpt-fake', 1, 2],
    ] as const) {
      await driver
        .api('put', `/prices/${model}`)
        .send({ input_per_mtok: input, output_per_mtok: output })
        .expect(200);
    }

    page = await signedInPage(browser, app.baseUrl, problems);
  });

  async function addProvider(name: string, kind: string, baseUrl: string, key: string) {
    await page.goto('/providers');
    await page.fill('#name', name);
    await page.selectOption('#kind', kind);
    await page.fill('#base_url', baseUrl);
    await page.fill('#api_key', key);
    await Promise.all([page.waitForURL('**/providers'), page.click('text=Add provider')]);
  }

  it('adds an Anthropic provider and an OpenAI-compatible one, keys write-only', async () => {
    await addProvider('claude', 'anthropic', anthropic.baseUrl, anthropic.apiKey);
    await addProvider('backup', 'openai', openai.baseUrl, BACKUP_KEY);
    const listed = await page.textContent('main');
    expect(listed).toContain('claude');
    expect(listed).toContain('backup');
    for (const key of [anthropic.apiKey, BACKUP_KEY])
      expect(await page.content()).not.toContain(key);
  });

  it('picks the provider and a fallback in the channel editor', async () => {
    await page.goto(`/channels/${channel.id}`);
    await page.selectOption('#ai_provider', 'claude');
    await page.fill('#ai_model', 'claude-fake');
    await page.selectOption('#ai_fallback_provider_1', 'backup');
    await page.fill('#ai_fallback_model_1', 'gpt-fake');
    await Promise.all([
      page.waitForURL(`**/channels/${channel.id}`),
      page.click('#editor button:has-text("Save")'),
    ]);
    expect(await page.textContent('.flash')).toBe('Channel saved.');
    const saved = (await driver.api('get', `/channels/${channel.id}`).expect(200)).body;
    expect(saved.ai).toMatchObject({
      provider: 'claude',
      model: 'claude-fake',
      fallbacks: [{ provider: 'backup', model: 'gpt-fake' }],
    });
  });

  let answered: string;

  it('falls back when Anthropic is overloaded, and Brain Logs shows both calls and the cost', async () => {
    anthropic.enqueue({ status: 529 });
    openai.enqueue({
      body: {
        ...chatCompletion('We are on it.'),
        model: 'gpt-fake',
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 500,
          total_tokens: 1500,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
      },
    });
    const sent = await driver.sendEvent(channel.webhook_url, { text: 'Where is my parcel?' });
    expect(sent.status).toBe(200);
    answered = String(sent.body.event_id);
    await createWorker(app.ctx).runOnce();
    // Anthropic was asked in its own protocol, with its key.
    expect(anthropic.requests).toHaveLength(1);
    expect(anthropic.requests[0]?.body).toMatchObject({ model: 'claude-fake' });

    await page.goto(`/logs/${answered}`);
    const calls = page.locator('#calls .calls-table tbody tr');
    expect(await calls.count()).toBe(2);
    const rows = await Promise.all(
      [0, 1].map(async (i) =>
        (await calls.nth(i).locator('td').allTextContents()).map((text) => text.trim()),
      ),
    );
    expect(rows[0]).toEqual(expect.arrayContaining(['claude', 'claude-fake', 'error', '529']));
    expect(rows[1]).toEqual(expect.arrayContaining(['backup', 'gpt-fake', 'ok', '200']));
    // (1000 × 1 + 500 × 2) / 1e6: the overloaded call reported no usage and costs nothing known.
    expect(Number(await page.getAttribute('.event-cost', 'data-usd'))).toBeCloseTo(0.002, 12);
    expect(await page.textContent('#reply')).toContain('We are on it.');
    await page.screenshot({ path: `${SCREENSHOTS}/event-fallback-calls.png`, fullPage: true });
  });

  it('stops at the budget: 403 budget_exceeded at the door, stored events waiting', async () => {
    // Stored before the budget is set: it waits, and is never failed.
    const waiting = await driver.sendEvent(channel.webhook_url, { text: 'And my refund?' });
    expect(waiting.status).toBe(200);
    const waitingId = String(waiting.body.event_id);
    // Without a budget the worker does not wait for its spend records: wait for the first
    // event's call to count.
    await eventually(
      async () => {
        const workspace = (await driver.api('get', '/workspace').expect(200)).body;
        return (workspace.spent_usd as number) >= 0.002 - 1e-12 || undefined;
      },
      { what: "the answered event's spend" },
    );

    await page.goto('/workspace');
    await page.fill('#monthly_budget_usd', '0.002');
    await Promise.all([
      page.waitForURL('**/workspace'),
      page.click('form:has(#monthly_budget_usd) button:has-text("Save")'),
    ]);
    expect(Number(await page.getAttribute('#spent-usd', 'data-usd'))).toBeCloseTo(0.002, 12);
    expect(await page.isVisible('#budget-reached')).toBe(true);
    // Tokens, events and cost are drawn as three charts, one axis each.
    await page.waitForFunction(
      `['usage-chart-tokens', 'usage-chart-events', 'usage-chart-cost'].every((id) => {
        const drawn = window.Chart.getChart(document.getElementById(id));
        return drawn !== undefined && Object.keys(drawn.options.scales).length === 2;
      })`,
    );
    expect(await page.locator('#spend-by-model tbody tr').count()).toBeGreaterThan(0);

    const refused = await driver.sendEvent(channel.webhook_url, { text: 'Hello?' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: 'budget_exceeded',
      monthly_budget_usd: 0.002,
      resets_at: expect.any(String),
    });

    const requestsBefore = anthropic.requests.length + openai.requests.length;
    await createWorker(app.ctx).runOnce();
    expect(anthropic.requests.length + openai.requests.length).toBe(requestsBefore);
    await page.goto(`/logs/${waitingId}`);
    expect(await page.getAttribute('h1 .badge', 'class')).toContain('badge-pending');
    await page.goto('/logs');
    expect(await page.getAttribute(`#event-${waitingId}`, 'data-status')).toBe('pending');
    expect(await page.getAttribute(`#event-${answered}`, 'data-status')).toBe('replied');
    await page.screenshot({ path: `${SCREENSHOTS}/workspace-budget-reached.png`, fullPage: true });
  });

  it('leaves no provider key readable in a dump of the database', async () => {
    const dump = await databaseDump(app.database.db, app.database.url);
    for (const key of [anthropic.apiKey, BACKUP_KEY]) expect(foundIn(dump, key), key).toEqual([]);
    expect(foundIn(app.logText(), BACKUP_KEY)).toEqual([]);
  });

  it('raised no script error and no CSP violation', async () => {
    await checkVisitedPages(problems);
    expect(problems).toEqual([]);
  });
});

import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { chatCompletion, toolCallsAnswer } from '../support/fake-ai-server.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { ToolEndpoint } from '../support/tool-servers.js';
import { ADMIN_ENV } from '../panel/panel-client.js';
import {
  NOT_RUN,
  hasChromium,
  launchChromium,
  signIn,
  watchForProblems,
  checkVisitedPages,
} from './browser.js';

if (!hasChromium) {
  console.warn(`hookprompt: ${NOT_RUN}`);
  it.skip(NOT_RUN, () => undefined);
}

/** An OpenAI answer asking for one call. */
/** Brain Logs in a real browser: an operator approves a refund from the detail beside the list. */
describe.skipIf(!hasChromium)('approvals in Brain Logs in a real browser', () => {
  const endpoint = useFixture(() => ToolEndpoint.start(), { stop: (server) => server.close() });
  const { app, driver, ai } = useTestApp({
    ai: true,
    env: { ...ADMIN_ENV, TOOLS_ALLOW_PRIVATE: 'true' },
  });
  const browser = useFixture(launchChromium, { stop: (chromium) => chromium.close() });
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    const context = await browser.newContext({
      baseURL: app.baseUrl,
      viewport: { width: 1440, height: 900 },
    });
    page = await context.newPage();
    watchForProblems(page, problems);
    await signIn(page);
  });

  it('finds the waiting event with the filter and approves its refund with a note', async () => {
    for (const [name, path, approval] of [
      ['lookup', '/orders', 'never'],
      ['refund', '/refunds', 'always'],
    ] as const) {
      await driver
        .api('post', '/tools')
        .send({
          name,
          kind: 'http',
          description: name,
          url: `${endpoint.baseUrl}${path}`,
          input_schema: { type: 'object', properties: { order: { type: 'string' } } },
          approval,
        })
        .expect(201);
    }
    const channel = await driver.createChannel({
      name: 'Support',
      template: 'Ticket: {{text}}',
      ai: { tools: ['lookup', 'refund'] },
    });
    ai.enqueue(
      toolCallsAnswer(['lookup', '{"order":"A1"}']),
      toolCallsAnswer(['refund', '{"order":"A1"}']),
      {
        body: chatCompletion('Refunded A1.'),
      },
    );
    const sent = await driver.sendEvent(channel.webhook_url, { text: 'Refund A1' });
    const id = sent.body.event_id as string;
    await createWorker(app.ctx).runOnce();

    // Brain Logs' status filter (in the folded filters) offers the status and finds the event.
    await page.goto('/logs?status=awaiting_approval');
    expect(await page.locator('#status').inputValue()).toBe('awaiting_approval');
    expect(await page.locator('.event-row').count()).toBe(1);
    await page.locator(`#event-${id} .row-link`).click();
    const detail = page.locator('#event-detail #approval');
    await detail.waitFor();
    expect(await detail.locator('.tool-name').textContent()).toBe('refund');
    expect(await detail.locator('#approval-arguments').textContent()).toBe('{\n  "order": "A1"\n}');
    await detail.locator('input[name="note"]').fill('Receipt checked');
    await detail.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(new RegExp(`/logs/${id}$`));
    await page.getByText('the call is approved').waitFor();

    expect((await driver.api('get', `/events/${id}`).expect(200)).body.status).toBe('pending');
    await createWorker(app.ctx).runOnce();
    const done = (await driver.api('get', `/events/${id}`).expect(200)).body;
    expect(done).toMatchObject({ status: 'replied', reply: 'Refunded A1.' });
    expect(endpoint.requests.filter((r) => r.url === '/refunds')).toHaveLength(1);
    await checkVisitedPages(problems);
    expect(problems).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import type { AlertsEvaluator } from '../../src/alerts/alerts-evaluator.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';
import { ADMIN_ENV, inlineCode, useSignedInAdmin } from './panel-client.js';

const receiver = useReplyReceiver();
const { app, driver } = useTestApp({ env: { ...ADMIN_ENV, DELIVERY_ALLOW_PRIVATE: 'true' } });
const client = useSignedInAdmin(app);

/** The rows of one alert's history table, newest first, as "change|value|notification". */
function historyOf(html: string, alertId: string): string[] {
  const section = html.split(`data-history="${alertId}"`)[1]?.split('</section>')[0] ?? '';
  return [...section.matchAll(/<tr data-change="[^"]+">([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<td>([\s\S]*?)<\/td>/g)]
      .slice(1)
      .map((cell) => (cell[1] ?? '').replace(/<[^>]+>/g, '').trim())
      .join('|'),
  );
}

describe('the Alerts page', () => {
  it('is linked in the navigation and says how to add the first alert', async () => {
    const page = await client.page('/alerts');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/alerts" aria-current="page">Alerts</a>');
    expect(page.text).toContain('id="no-alerts"');
    expect(inlineCode(page.text)).toEqual([]);
  });

  it("shows each rule's state and its history of changes and notifications", async () => {
    const created = await driver
      .api('post', '/alerts')
      .send({
        name: 'Budget <b>half</b> spent',
        condition: { type: 'budget', percent: 50 },
        notify: { kind: 'webhook', url: receiver.url('/alerts') },
      })
      .expect(201);
    const id = created.body.id as string;
    const evaluator = app.ctx.alertsEvaluator as AlertsEvaluator;

    let page = await client.page('/alerts');
    expect(page.text).toContain('Budget &lt;b&gt;half&lt;/b&gt; spent');
    expect(page.text).toContain(`data-alert="${id}" data-state="ok"`);
    expect(page.text).toContain('50% of the monthly budget spent');
    expect(historyOf(page.text, id)).toEqual([]);

    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    await evaluator.runOnce();
    page = await client.page('/alerts');
    expect(page.text).toContain(`data-alert="${id}" data-state="firing"`);
    expect(historyOf(page.text, id)).toEqual(['Started firing|100% spent|Sent']);

    await driver.setWorkspace({ monthly_budget_usd: 10 }).expect(200);
    await evaluator.runOnce();
    page = await client.page('/alerts');
    expect(page.text).toContain(`data-alert="${id}" data-state="ok"`);
    expect(historyOf(page.text, id)).toEqual([
      'Cleared|0% spent|Sent',
      'Started firing|100% spent|Sent',
    ]);
    expect(receiver.messages).toHaveLength(2);
  });

  it('names the channel a condition watches (HTML-escaped), and says so when it watches all', async () => {
    const channel = await driver.createChannel({ name: 'Shop <orders>' });
    await driver
      .api('post', '/alerts')
      .send({
        name: 'Shop deliveries',
        condition: { type: 'delivery_failed', channel_id: channel.id },
        notify: { kind: 'webhook', url: receiver.url('/alerts') },
      })
      .expect(201);
    await driver
      .api('post', '/alerts')
      .send({
        name: 'Any rejections',
        condition: { type: 'rejections', count: 5, window_s: 60 },
        notify: { kind: 'webhook', url: receiver.url('/alerts') },
      })
      .expect(201);
    const page = await client.page('/alerts');
    expect(page.text).toContain('A delivery failed, channel “Shop &lt;orders&gt;”');
    expect(page.text).toContain('Rejected requests ≥ 5 over 60 s, any channel');
  });
});

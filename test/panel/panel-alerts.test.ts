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

  it('sends a test notification from the alert\'s "Send test" button, with the CSRF token, and says what came of it', async () => {
    const secret = await driver.api('get', '/alerts/secret').expect(200);
    receiver.secrets = [secret.body.secret as string];
    const created = await driver
      .api('post', '/alerts')
      .send({
        name: 'Queue slow',
        condition: { type: 'queue_age', seconds: 60 },
        notify: { kind: 'webhook', url: receiver.url('/panel-test') },
      })
      .expect(201);
    const id = created.body.id as string;
    const page = await client.page('/alerts');
    expect(page.text).toContain(`action="/alerts/${id}/test"`);
    const before = receiver.messages.length;

    // Without the session's CSRF token nothing is sent.
    const forged = await client.form(`/alerts/${id}/test`, { _csrf: 'forged' });
    expect(forged.status).toBe(403);
    expect(receiver.messages).toHaveLength(before);

    const sent = await client.form(`/alerts/${id}/test`);
    expect(sent.status).toBe(303);
    expect(sent.headers.location).toBe(`/alerts#alert-${id}`);
    const message = receiver.messages.at(-1);
    expect(receiver.messages).toHaveLength(before + 1);
    expect(message?.verifiedWith).toHaveLength(1);
    expect(message?.json).toMatchObject({ type: 'alert.test', data: { test: true } });
    expect((await client.page('/alerts')).text).toContain('Test notification sent.');

    receiver.enqueue({ status: 500 });
    await client.form(`/alerts/${id}/test`).expect(303);
    expect((await client.page('/alerts')).text).toMatch(/Test notification not sent: HTTP 500/);
  });

  it("adds an alert from the form, after_attempts included, and shows the API's refusals at the fields", async () => {
    await app.ctx.db.query('delete from alerts');
    const channel = await driver.createChannel({ name: 'Form channel' });
    const url = receiver.url('/form');
    const added = await client.form('/alerts', {
      name: 'Deliveries failing',
      type: 'delivery_failed',
      channel_id: channel.id,
      delivery_failed_after_attempts: '3',
      notify_kind: 'webhook',
      notify_webhook_url: url,
    });
    expect(added.status).toBe(303);
    const listed = (await driver.api('get', '/alerts').expect(200)).body.data as unknown[];
    expect(listed).toEqual([
      expect.objectContaining({
        name: 'Deliveries failing',
        condition: { type: 'delivery_failed', channel_id: channel.id, after_attempts: 3 },
        notify: expect.objectContaining({ kind: 'webhook', url }),
      }),
    ]);
    const page = await client.page('/alerts');
    expect(page.text).toContain('A delivery failed 3 attempts, channel “Form channel”');

    const refused = await client.form('/alerts', {
      name: 'Too many attempts',
      type: 'delivery_failed',
      delivery_failed_after_attempts: '25',
      notify_kind: 'webhook',
      notify_webhook_url: url,
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="alert-delivery_failed_after_attempts-error"/);
    expect(refused.text).toContain('value="Too many attempts"');
  });

  it('refuses the 101st alert from the form with the limit named', async () => {
    await app.ctx.db.query('delete from alerts');
    await app.ctx.db.query(
      `insert into alerts (workspace_id, name, condition, notify)
       select $1, 'Alert ' || n, '{"type": "queue_age", "seconds": 60}', $2
       from generate_series(1, 100) n`,
      [app.ctx.defaultWorkspaceId, JSON.stringify({ kind: 'webhook', url: receiver.url('/x') })],
    );
    const refused = await client.form('/alerts', {
      name: 'One too many',
      type: 'queue_age',
      queue_age_seconds: '60',
      notify_kind: 'webhook',
      notify_webhook_url: receiver.url('/x'),
    });
    expect(refused.status).toBe(409);
    expect(refused.text).toMatch(/id="form-error">[^<]*at most 100 alerts/);
    await app.ctx.db.query('delete from alerts');
  });
});

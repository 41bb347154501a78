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

  it('adds an alert held for_s seconds, its fields and choices labelled in words', async () => {
    await app.ctx.db.query('delete from alerts');
    const page = await client.page('/alerts');
    expect(page.text).toContain('<label for="alert-for_s">Hold for (seconds, 0–3,600)</label>');
    expect(page.text).toContain('<option value="queue_age">Events wait too long</option>');
    expect(page.text).toContain('<option value="teams">Microsoft Teams</option>');
    expect(page.text).toContain(
      '<label for="alert-failure_rate_window_s">Over the last (seconds)</label>',
    );
    // No member name of the API as a label.
    expect(page.text).not.toMatch(
      /<label for="[^"]+">(window_s|after_attempts|webhook_url|bot_token)\b/,
    );

    const added = await client.form('/alerts', {
      name: 'Queue stuck',
      type: 'queue_age',
      queue_age_seconds: '120',
      for_s: '300',
      notify_kind: 'webhook',
      notify_webhook_url: receiver.url('/held'),
    });
    expect(added.status).toBe(303);
    const listed = (await driver.api('get', '/alerts').expect(200)).body.data as unknown[];
    expect(listed).toEqual([
      expect.objectContaining({
        name: 'Queue stuck',
        for_s: 300,
        condition: { type: 'queue_age', seconds: 120 },
      }),
    ]);
    expect((await client.page('/alerts')).text).toContain('(held 300 s)');
  });

  it('edits an alert on its own page: secrets kept, a rename keeps its state, a new condition starts afresh', async () => {
    await app.ctx.db.query('delete from alerts');
    const channel = await driver.createChannel({ name: 'Edited channel' });
    const hook = 'https://hooks.slack.com/services/T0/B0/secret-part-4567';
    const created = await driver
      .api('post', '/alerts')
      .send({
        name: 'Shop deliveries',
        condition: { type: 'delivery_failed', channel_id: channel.id, after_attempts: 2 },
        notify: { kind: 'slack', webhook_url: hook, message: 'Shop {{state}}' },
      })
      .expect(201);
    const id = created.body.id as string;
    await app.ctx.db.query(
      `update alerts set state = 'firing', since = now(), last_value = 1 where id = $1`,
      [id],
    );

    const list = await client.page('/alerts');
    expect(list.text).toContain(`<a href="/alerts/${id}">Shop deliveries</a>`);
    const page = await client.page(`/alerts/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Shop deliveries</h1>');
    expect(page.text).toContain('value="Shop deliveries"');
    expect(page.text).toContain(
      '<option value="delivery_failed" selected>A delivery failed</option>',
    );
    expect(page.text).toContain(`<option value="${channel.id}" selected>Edited channel</option>`);
    expect(page.text).toContain('name="delivery_failed_after_attempts" value="2"');
    expect(page.text).toContain('<option value="slack" selected>Slack</option>');
    expect(page.text).toContain('Incoming Webhook URL (secret; empty keeps the one saved)');
    expect(page.text).not.toContain('secret-part');
    expect(inlineCode(page.text)).toEqual([]);

    const form = {
      name: 'Shop deliveries (all targets)',
      type: 'delivery_failed',
      channel_id: channel.id,
      delivery_failed_after_attempts: '2',
      for_s: '120',
      notify_kind: 'slack',
      notify_slack_webhook_url: '',
      message: 'Shop {{state}}',
    };
    const saved = await client.form(`/alerts/${id}`, form);
    expect(saved.status).toBe(303);
    expect(saved.headers.location).toBe(`/alerts/${id}`);
    expect((await client.page(`/alerts/${id}`)).text).toContain('Alert saved.');
    expect((await driver.api('get', `/alerts/${id}`).expect(200)).body).toMatchObject({
      name: 'Shop deliveries (all targets)',
      for_s: 120,
      state: 'firing',
      last_value: 1,
      notify: { kind: 'slack', url_set: true, message: 'Shop {{state}}' },
    });
    const { rows } = await app.ctx.db.query<{ notify_secret: string }>(
      'select notify_secret from alerts where id = $1',
      [id],
    );
    expect(app.ctx.secrets.open(rows[0]!.notify_secret)).toBe(hook);

    const refused = await client.form(`/alerts/${id}`, { ...form, for_s: '4000' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="alert-for_s-error"/);
    expect(refused.text).toContain('href="#alert-for_s">Hold for (seconds, 0–3,600)</a>');
    expect(refused.text).toContain('value="4000"');
    expect((await driver.api('get', `/alerts/${id}`).expect(200)).body.for_s).toBe(120);

    await client
      .form(`/alerts/${id}`, { ...form, type: 'budget', budget_percent: '80' })
      .expect(303);
    expect((await driver.api('get', `/alerts/${id}`).expect(200)).body).toMatchObject({
      condition: { type: 'budget', percent: 80 },
      state: 'ok',
      since: null,
    });
  });

  it('turns an alert off and on from its row and from its page', async () => {
    await app.ctx.db.query('delete from alerts');
    const created = await driver
      .api('post', '/alerts')
      .send({
        name: 'Budget',
        condition: { type: 'budget', percent: 90 },
        notify: { kind: 'webhook', url: receiver.url('/switch') },
      })
      .expect(201);
    const id = created.body.id as string;
    const enabled = async () =>
      (await driver.api('get', `/alerts/${id}`).expect(200)).body.enabled as boolean;

    await client.form(`/alerts/${id}/disable`, { _csrf: 'forged' }).expect(403);
    expect(await enabled()).toBe(true);
    const off = await client.form(`/alerts/${id}/disable`);
    expect(off.status).toBe(303);
    expect(off.headers.location).toBe(`/alerts#alert-${id}`);
    expect(await enabled()).toBe(false);
    const list = await client.page('/alerts');
    expect(list.text).toContain(`data-alert="${id}" data-state="ok" data-enabled="false"`);
    expect(list.text).toContain(`action="/alerts/${id}/enable"`);
    expect(list.text).toContain('is off: it is not checked.');

    const on = await client.form(`/alerts/${id}/enable`, { back: 'edit' });
    expect(on.headers.location).toBe(`/alerts/${id}`);
    expect(await enabled()).toBe(true);
    expect((await client.page(`/alerts/${id}`)).text).toContain(`action="/alerts/${id}/disable"`);

    // Sent from its page, a test comes back to it.
    const test = await client.form(`/alerts/${id}/test`, { back: 'edit' });
    expect(test.headers.location).toBe(`/alerts/${id}`);
    expect(receiver.messages.at(-1)?.json).toMatchObject({
      type: 'alert.test',
      data: { test: true },
    });
  });

  it('deletes an alert only from a page that asks first', async () => {
    await app.ctx.db.query('delete from alerts');
    const created = await driver
      .api('post', '/alerts')
      .send({
        name: 'Doomed <rule>',
        condition: { type: 'queue_age', seconds: 60 },
        notify: { kind: 'webhook', url: receiver.url('/doomed') },
      })
      .expect(201);
    const id = created.body.id as string;

    const page = await client.page(`/alerts/${id}`);
    expect(page.text).toContain(`<a class="button danger" href="/alerts/${id}/delete">`);
    expect(page.text).not.toContain(`action="/alerts/${id}/delete"`);
    const asks = await client.page(`/alerts/${id}/delete`);
    expect(asks.status).toBe(200);
    expect(asks.text).toContain('<h1>Delete “Doomed &lt;rule&gt;”?</h1>');
    expect(asks.text).toContain(`action="/alerts/${id}/delete"`);
    expect(asks.text).toContain(`<a class="button" href="/alerts/${id}">Cancel</a>`);
    await driver.api('get', `/alerts/${id}`).expect(200);

    await client.form(`/alerts/${id}/delete`, { _csrf: 'forged' }).expect(403);
    await driver.api('get', `/alerts/${id}`).expect(200);
    const deleted = await client.form(`/alerts/${id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.location).toBe('/alerts');
    await driver.api('get', `/alerts/${id}`).expect(404);
    expect((await client.page('/alerts')).text).toContain('Alert “Doomed &lt;rule&gt;” deleted');
    expect((await client.page(`/alerts/${id}`)).status).toBe(404);
  });
});

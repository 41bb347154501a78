import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryWorker } from '../../src/deliveries/create-delivery-worker.js';
import { createWorker } from '../../src/worker/create-worker.js';
import type { AlertsEvaluator } from '../../src/alerts/alerts-evaluator.js';
import { type ChannelJson } from '../support/driver.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';

const receiver = useReplyReceiver();
const { app, driver, ai } = useTestApp({
  ai: true,
  // The receiver listens on loopback.
  env: { DELIVERY_ALLOW_PRIVATE: 'true', DELIVERY_TIMEOUT_MS: '2000' },
});
let evaluator: AlertsEvaluator;

// Every call of these tests costs exactly $1: the fake model reports 1 prompt token.
const MODEL = 'dollar-model';

beforeAll(async () => {
  evaluator = app.ctx.alertsEvaluator as AlertsEvaluator;
  const secret = await driver.api('get', '/alerts/secret').expect(200);
  expect(secret.body.secret).toMatch(/^whsec_/);
  receiver.secrets = [secret.body.secret as string];
});

afterEach(async () => {
  receiver.messages.length = 0;
  await app.ctx.db.query('delete from alerts');
  await app.ctx.db.query('delete from events');
  await app.ctx.db.query('update workspaces set monthly_budget_usd = null, spent_usd = 0');
});

async function createAlert(condition: Record<string, unknown>) {
  const res = await driver.api('post', '/alerts').send({
    name: `When ${String(condition.type)}`,
    condition,
    notify: { kind: 'webhook', url: receiver.url('/alerts') },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

async function alertNow(id: string) {
  return (await driver.api('get', `/alerts/${id}`).expect(200)).body as Record<string, unknown>;
}

/** Evaluates twice (the second must change nothing) and says what the receiver got. */
async function evaluate() {
  const first = await evaluator.runOnce();
  const second = await evaluator.runOnce();
  expect(second).toEqual({ changed: 0, sent: 0 });
  return first;
}

/** The alert messages received so far, each checked with the standardwebhooks library. */
function notifications() {
  const alerts = receiver.messages.filter((message) => message.path === '/alerts');
  for (const message of alerts) expect(message.verifiedWith).toHaveLength(1);
  return alerts.map((message) => ({
    type: message.json.type,
    value: message.json.data.value,
    state: (message.json.data.alert as { state: string }).state,
  }));
}

const scrape = async () => (await fetch(`${app.baseUrl}/metrics`)).text();

async function receive(channel: ChannelJson, count: number) {
  for (let i = 0; i < count; i++)
    expect((await driver.sendEvent(channel.webhook_url, { order: { id: i } })).status).toBe(200);
}

describe('alert conditions', () => {
  it('failure_rate fires at the threshold and clears below it, notifying once each', async () => {
    const channel = await driver.createChannel();
    const alert = await createAlert({
      type: 'failure_rate',
      channel_id: channel.id,
      threshold: 0.5,
      window_s: 3600,
      min_events: 2,
    });
    ai.enqueue({ status: 400 });
    await receive(channel, 1);
    await createWorker(app.ctx).runOnce();
    // One failed of one: not yet min_events.
    expect(await evaluate()).toEqual({ changed: 0, sent: 0 });

    ai.enqueue({ status: 400 });
    await receive(channel, 1);
    await createWorker(app.ctx).runOnce();
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'firing', last_value: 1 });
    expect((await alertNow(alert.id)).since).toEqual(expect.any(String));

    await receive(channel, 3);
    await createWorker(app.ctx).runOnce();
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 0.4 });
    expect(notifications()).toEqual([
      { type: 'alert.firing', value: 1, state: 'firing' },
      { type: 'alert.resolved', value: 0.4, state: 'ok' },
    ]);
  });

  it('rejections fires at the count and clears when they leave the window', async () => {
    const channel = await driver.createChannel();
    const alert = await createAlert({ type: 'rejections', count: 2, window_s: 600 });
    // A spent budget refuses webhooks: 403, recorded as rejected.
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    for (let i = 0; i < 2; i++)
      expect((await driver.sendEvent(channel.webhook_url)).status).toBe(403);
    await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'firing', last_value: 2 });

    // Eleven minutes later the rejections are older than the window.
    await app.ctx.db.query(`update events set received_at = received_at - interval '11 minutes'`);
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(notifications()).toEqual([
      { type: 'alert.firing', value: 2, state: 'firing' },
      { type: 'alert.resolved', value: 0, state: 'ok' },
    ]);
  });

  it('delivery_failed fires when a delivery fails and clears when a later one is delivered', async () => {
    const channel = await driver.createChannel();
    await driver
      .updateChannel(channel.id, { reply_delivery: { url: receiver.url('/replies') } })
      .expect(200);
    const alert = await createAlert({ type: 'delivery_failed', channel_id: channel.id });

    await receive(channel, 1);
    await createWorker(app.ctx).runOnce();
    // A worker that may not reach loopback fails the delivery at once.
    await createDeliveryWorker(app.ctx, { allowPrivate: false }).runOnce();
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'firing', last_value: 1 });

    await receive(channel, 1);
    await createWorker(app.ctx).runOnce();
    await createDeliveryWorker(app.ctx).runOnce();
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(notifications()).toEqual([
      { type: 'alert.firing', value: 1, state: 'firing' },
      { type: 'alert.resolved', value: 0, state: 'ok' },
    ]);
  });

  it('delivery_failed with after_attempts fires once a delivery failed that many attempts, while it is still retried', async () => {
    const channel = await driver.createChannel();
    await driver
      .updateChannel(channel.id, { reply_delivery: { url: receiver.url('/replies') } })
      .expect(200);
    const early = await createAlert({
      type: 'delivery_failed',
      channel_id: channel.id,
      after_attempts: 2,
    });
    const anyChannel = await createAlert({ type: 'delivery_failed', after_attempts: 2 });
    const atTheEnd = await createAlert({ type: 'delivery_failed', channel_id: channel.id });
    const deliveries = createDeliveryWorker(app.ctx);
    const deliverNow = async () => {
      // Due now rather than after its back-off.
      await app.ctx.db.query(`update deliveries set run_at = now() where state = 'pending'`);
      await deliveries.runOnce();
    };
    receiver.enqueue({ status: 500 }, { status: 500 });
    await receive(channel, 1);
    await createWorker(app.ctx).runOnce();

    await deliverNow();
    // One failed attempt of two.
    expect(await evaluate()).toEqual({ changed: 0, sent: 0 });
    await deliverNow();
    expect(await evaluate()).toEqual({ changed: 2, sent: 2 });
    expect(await alertNow(early.id)).toMatchObject({ state: 'firing', last_value: 1 });
    expect(await alertNow(anyChannel.id)).toMatchObject({ state: 'firing', last_value: 1 });
    // The delivery is still retried on its schedule: the rule without after_attempts waits.
    expect(await alertNow(atTheEnd.id)).toMatchObject({ state: 'ok', since: null });
    const { rows } = await app.ctx.db.query('select state, attempts from deliveries');
    expect(rows).toEqual([{ state: 'pending', attempts: 2 }]);

    // The third attempt is delivered: both clear.
    await deliverNow();
    expect(await evaluate()).toEqual({ changed: 2, sent: 2 });
    expect(await alertNow(early.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(await alertNow(anyChannel.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(notifications().map((n) => [n.type, n.value])).toEqual([
      ['alert.firing', 1],
      ['alert.firing', 1],
      ['alert.resolved', 0],
      ['alert.resolved', 0],
    ]);
  });

  it('sends a test notification on request: one signed alert.test message, nothing recorded', async () => {
    const alert = await createAlert({ type: 'queue_age', seconds: 60 });
    const sent = await driver.api('post', `/alerts/${alert.id}/test`).expect(200);
    expect(sent.body).toEqual({ ok: true });
    const messages = receiver.messages.filter((message) => message.path === '/alerts');
    expect(messages).toHaveLength(1);
    expect(messages[0]?.verifiedWith).toHaveLength(1);
    expect(messages[0]?.json).toMatchObject({
      type: 'alert.test',
      timestamp: expect.any(String),
      data: { test: true, value: null, alert: { id: alert.id, state: 'ok' } },
    });
    const { rows } = await app.ctx.db.query('select id from alert_changes');
    expect(rows).toEqual([]);
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', since: null });

    receiver.enqueue({ status: 503 });
    const refused = await driver.api('post', `/alerts/${alert.id}/test`).expect(200);
    expect(refused.body).toEqual({ ok: false, error: expect.stringContaining('HTTP 503') });
    await driver.api('post', '/alerts/999999/test').expect(404);
  });

  it("cuts the notify URL's secrets out of a test's error", async () => {
    const secret = 'sig-0123456789abcdef';
    const res = await driver.api('post', '/alerts').send({
      name: 'Signed URL',
      condition: { type: 'queue_age', seconds: 60 },
      notify: { kind: 'webhook', url: receiver.url(`/signed?sig=${secret}`) },
    });
    expect(res.status).toBe(201);
    receiver.enqueue({ status: 400, body: `bad request for sig=${secret}` });
    const refused = await driver.api('post', `/alerts/${res.body.id as string}/test`).expect(200);
    expect(refused.body.ok).toBe(false);
    expect(refused.body.error).toContain('HTTP 400');
    expect(refused.body.error).not.toContain(secret);
  });

  it('queue_age fires while the oldest pending event is older, and clears once it is answered', async () => {
    const channel = await driver.createChannel();
    const alert = await createAlert({ type: 'queue_age', seconds: 60 });
    await receive(channel, 1);
    expect(await evaluate()).toEqual({ changed: 0, sent: 0 });

    await app.ctx.db.query(`update events set received_at = now() - interval '100 seconds'`);
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    const firing = await alertNow(alert.id);
    expect(firing.state).toBe('firing');
    expect(firing.last_value).toBeGreaterThanOrEqual(100);
    expect(firing.last_value).toBeLessThan(160);

    await createWorker(app.ctx).runOnce();
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(notifications().map((n) => n.type)).toEqual(['alert.firing', 'alert.resolved']);
  });

  it('budget fires at its share of the monthly budget and clears when the budget is raised', async () => {
    await driver
      .api('put', `/prices/${MODEL}`)
      .send({ input_per_mtok: 1_000_000, output_per_mtok: 0 })
      .expect(200);
    const channel = await driver.createChannel({ ai: { model: MODEL } });
    const alert = await createAlert({ type: 'budget', percent: 50 });
    await driver.setWorkspace({ monthly_budget_usd: 4 }).expect(200);
    await receive(channel, 1);
    await createWorker(app.ctx).runOnce();
    expect(await evaluate()).toEqual({ changed: 0, sent: 0 });

    await receive(channel, 1);
    await createWorker(app.ctx).runOnce();
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'firing', last_value: 50 });
    expect(await scrape()).toMatch(/^hookprompt_alerts_firing 1$/m);

    await driver.setWorkspace({ monthly_budget_usd: 20 }).expect(200);
    expect(await evaluate()).toEqual({ changed: 1, sent: 1 });
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 10 });
    expect(await scrape()).toMatch(/^hookprompt_alerts_firing 0$/m);
    expect(notifications()).toEqual([
      { type: 'alert.firing', value: 50, state: 'firing' },
      { type: 'alert.resolved', value: 10, state: 'ok' },
    ]);
  });
});

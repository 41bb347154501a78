import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AlertsEvaluator } from '../../src/alerts/alerts-evaluator.js';
import { createDeliveryWorker } from '../../src/deliveries/create-delivery-worker.js';
import { createWorker } from '../../src/worker/create-worker.js';
import type { ChannelJson } from '../support/driver.js';
import { useFakeChats, useReplyReceiver, useTestApp } from '../support/harness.js';

/**
 * Alerts that don't flap: `delivery_failed` judged per target (the reply URL and each
 * destination on their own), and `for_s`, the time a condition must hold before the alert turns.
 */
const chats = useFakeChats();
const receiver = useReplyReceiver();
const { app, driver } = useTestApp({
  ai: true,
  env: () => ({ ...chats.env, DELIVERY_ALLOW_PRIVATE: 'true', DELIVERY_TIMEOUT_MS: '2000' }),
});
let evaluator: AlertsEvaluator;

beforeAll(async () => {
  evaluator = app.ctx.alertsEvaluator as AlertsEvaluator;
  receiver.secrets = [(await driver.api('get', '/alerts/secret').expect(200)).body.secret];
});

afterEach(async () => {
  receiver.messages.length = 0;
  chats.messages.length = 0;
  await app.ctx.db.query('delete from alerts');
  await app.ctx.db.query('update workspaces set monthly_budget_usd = null, spent_usd = 0');
});

async function createAlert(
  condition: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const res = await driver.api('post', '/alerts').send({
    name: `When ${String(condition.type)}`,
    condition,
    notify: { kind: 'webhook', url: receiver.url('/alerts') },
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; for_s: number };
}

const alertNow = async (id: string) =>
  (await driver.api('get', `/alerts/${id}`).expect(200)).body as Record<string, unknown>;

/** Evaluates twice (the second must change nothing); says how many alerts changed state. */
async function evaluate(): Promise<number | undefined> {
  const first = await evaluator.runOnce();
  expect(await evaluator.runOnce()).toEqual({ changed: 0, sent: 0 });
  return first.changed;
}

/** The alert notifications received, each checked with the standardwebhooks library. */
function notifications() {
  const alerts = receiver.messages.filter((message) => message.path === '/alerts');
  for (const message of alerts) expect(message.verifiedWith).toHaveLength(1);
  return alerts.map((message) => [message.json.type, message.json.data.value]);
}

/** A channel whose replies go to the reply URL and to a Slack channel (an Incoming Webhook). */
async function channelWithTwoTargets(): Promise<ChannelJson> {
  const channel = await driver.createChannel();
  await driver
    .updateChannel(channel.id, {
      reply_delivery: { url: receiver.url('/replies') },
      destinations: [{ kind: 'slack', webhook_url: chats.webhookUrl('slack-webhook', 'ops') }],
    })
    .expect(200);
  return channel;
}

/** One event received and answered: its two messages are queued. */
async function answerOne(channel: ChannelJson): Promise<void> {
  expect((await driver.sendEvent(channel.webhook_url, { order: { id: 1 } })).status).toBe(200);
  await createWorker(app.ctx).runOnce();
}

/**
 * Sends the messages waiting, now: `holdSlack` keeps Slack's waiting; `refused` sends them
 * through a worker that may not reach loopback, which fails each at once (no retry mends it).
 */
async function deliver(options: { holdSlack?: boolean; refused?: boolean } = {}): Promise<void> {
  await app.ctx.db.query(
    `update deliveries set run_at = now() + make_interval(hours => $1)
     where state = 'pending' and destination_id is not null`,
    [options.holdSlack ? 1 : 0],
  );
  await app.ctx.db.query(
    `update deliveries set run_at = now() where state = 'pending' and destination_id is null`,
  );
  await createDeliveryWorker(app.ctx, options.refused ? { allowPrivate: false } : {}).runOnce();
}

/** `seconds` later on the evaluator's clock: the turn under way began that much earlier. */
async function later(seconds: number): Promise<void> {
  await app.ctx.db.query(
    `update alerts set turning_since = turning_since - make_interval(secs => $1)`,
    [seconds],
  );
}

describe('delivery_failed, judged per target', () => {
  it('fires once for a failing reply URL while a working Slack destination takes turns with it', async () => {
    const channel = await channelWithTwoTargets();
    const onChannel = await createAlert({ type: 'delivery_failed', channel_id: channel.id });
    const anyChannel = await createAlert({ type: 'delivery_failed' });

    // Four events: each time the reply URL's message fails first, then Slack takes its own.
    // Read by the newest message of the channel, that fired and cleared at every turn.
    for (let turn = 0; turn < 4; turn++) {
      await answerOne(channel);
      await deliver({ holdSlack: true, refused: true });
      expect(await evaluate()).toBe(turn === 0 ? 2 : 0);
      await deliver();
      expect(await evaluate()).toBe(0);
    }
    expect(chats.of('slack-webhook')).toHaveLength(4);
    for (const alert of [onChannel, anyChannel])
      expect(await alertNow(alert.id)).toMatchObject({ state: 'firing', last_value: 1 });

    // The reply URL takes the next one: no target's newest message failed.
    await answerOne(channel);
    await deliver();
    expect(await evaluate()).toBe(2);
    for (const alert of [onChannel, anyChannel])
      expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(notifications()).toEqual([
      ['alert.firing', 1],
      ['alert.firing', 1],
      ['alert.resolved', 0],
      ['alert.resolved', 0],
    ]);
  });

  it('counts the failing targets, and a message still retried neither fires nor clears', async () => {
    const channel = await channelWithTwoTargets();
    const alert = await createAlert({ type: 'delivery_failed', channel_id: channel.id });

    // The first messages are retried (500): nothing settled, nothing fires.
    receiver.enqueue({ status: 500 });
    chats.script('slack-webhook', { status: 500 });
    await answerOne(channel);
    await deliver();
    expect(await evaluate()).toBe(0);

    // Both fail for good: two failing targets.
    await deliver({ refused: true });
    expect(await evaluate()).toBe(1);
    expect(await alertNow(alert.id)).toMatchObject({ state: 'firing', last_value: 2 });

    // The next event: the reply URL takes it, Slack's is retried. Slack's newest settled message
    // is still the failed one: the alert keeps firing.
    chats.script('slack-webhook', { status: 500 });
    await answerOne(channel);
    await deliver();
    expect(await evaluate()).toBe(0);
    const { rows } = await app.ctx.db.query<{ state: string }>(
      `select state from deliveries where destination_id is not null order by id desc limit 1`,
    );
    expect(rows).toEqual([{ state: 'pending' }]);
    expect(await alertNow(alert.id)).toMatchObject({ state: 'firing' });

    // Slack takes it on the next attempt: every target's newest message is delivered.
    await deliver();
    expect(await evaluate()).toBe(1);
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(notifications()).toEqual([
      ['alert.firing', 2],
      ['alert.resolved', 0],
    ]);
  });
});

describe('for_s', () => {
  it('is 0 unless given, read back, changed, and refused outside 0–3,600', async () => {
    const budget = { type: 'budget', percent: 80 };
    expect((await createAlert(budget)).for_s).toBe(0);
    const held = await createAlert(budget, { for_s: 300 });
    expect(held.for_s).toBe(300);
    expect(await alertNow(held.id)).toMatchObject({ for_s: 300, condition: budget });
    const changed = await driver.api('patch', `/alerts/${held.id}`).send({ for_s: 3600 });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ for_s: 3600, condition: budget });
    for (const for_s of [-1, 3601, 1.5, '60']) {
      const refused = await driver.api('patch', `/alerts/${held.id}`).send({ for_s });
      expect(refused.status).toBe(400);
      expect(refused.body.errors.map((error: { path: string }) => error.path)).toEqual(['for_s']);
    }
    // A member of the alert, not of its condition.
    const inCondition = await driver.api('post', '/alerts').send({
      name: 'x',
      condition: { ...budget, for_s: 60 },
      notify: { kind: 'webhook', url: receiver.url('/alerts') },
    });
    expect(inCondition.status).toBe(400);
  });

  it('fires only once the condition held at every check for for_s, and clears only once it stopped for as long', async () => {
    const alert = await createAlert({ type: 'budget', percent: 50 }, { for_s: 60 });
    const spent = (budget: number | null) =>
      driver.setWorkspace({ monthly_budget_usd: budget }).expect(200);

    // A budget of 0 is all spent: the condition holds, but not yet for 60 s.
    await spent(0);
    expect(await evaluate()).toBe(0);
    await later(30);
    expect(await evaluate()).toBe(0);
    // A check where it does not hold starts the count again.
    await spent(10);
    expect(await evaluate()).toBe(0);
    await spent(0);
    expect(await evaluate()).toBe(0);
    await later(59);
    expect(await evaluate()).toBe(0);
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', since: null });
    await later(1);
    expect(await evaluate()).toBe(1);
    expect(await alertNow(alert.id)).toMatchObject({ state: 'firing', last_value: 100 });

    // Clearing waits as long.
    await spent(10);
    expect(await evaluate()).toBe(0);
    await later(45);
    await spent(0);
    expect(await evaluate()).toBe(0);
    await spent(10);
    expect(await evaluate()).toBe(0);
    await later(60);
    expect(await evaluate()).toBe(1);
    expect(await alertNow(alert.id)).toMatchObject({ state: 'ok', last_value: 0 });
    expect(notifications()).toEqual([
      ['alert.firing', 100],
      ['alert.resolved', 0],
    ]);
  });

  it('forgets a turn under way when the alert is turned off and on', async () => {
    const alert = await createAlert({ type: 'budget', percent: 50 }, { for_s: 60 });
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    expect(await evaluate()).toBe(0);
    await later(120);
    await driver.api('patch', `/alerts/${alert.id}`).send({ enabled: false }).expect(200);
    await driver.api('patch', `/alerts/${alert.id}`).send({ enabled: true }).expect(200);
    // The first check after it is on again starts the count.
    expect(await evaluate()).toBe(0);
    await later(60);
    expect(await evaluate()).toBe(1);
    expect(notifications()).toEqual([['alert.firing', 100]]);
  });
});

import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CALLS_IN_FLIGHT } from '../../src/spend/budget-gate.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { ADMIN_ENV, unescapeHtml, useSignedInAdmin } from '../panel/panel-client.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({ ai: true, env: ADMIN_ENV });
const client = useSignedInAdmin(app);
let channel: ChannelJson;

// Every call of these tests costs exactly $1: the fake model reports 1 prompt token.
const MODEL = 'dollar-model';

beforeAll(async () => {
  await driver
    .api('put', `/prices/${MODEL}`)
    .send({ input_per_mtok: 1_000_000, output_per_mtok: 0 })
    .expect(200);
  channel = await driver.createChannel({ ai: { model: MODEL } });
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
  await app.ctx.db.query('delete from spend');
  await app.ctx.db.query(
    'update workspaces set monthly_budget_usd = null, spent_usd = 0, chat_quota = 1000, chats_used = 0',
  );
});

async function receive(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    expect((await driver.sendEvent(channel.webhook_url, { order: { id: i } })).status).toBe(200);
  }
}

async function statuses(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const event of await driver.eventsOf(channel.id)) {
    counts[event.status] = (counts[event.status] ?? 0) + 1;
  }
  return counts;
}

const workspace = async () =>
  (await driver.api('get', '/workspace').expect(200)).body as Record<string, unknown>;

describe('a monthly AI budget', () => {
  it('is shown with the month’s spend and when it starts again', async () => {
    await receive(2);
    await createWorker(app.ctx).runOnce();
    await driver.setWorkspace({ monthly_budget_usd: 10 }).expect(200);
    const now = new Date();
    expect(await workspace()).toMatchObject({
      monthly_budget_usd: 10,
      spent_usd: 2,
      budget_resets_at: new Date(
        Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
      ).toISOString(),
    });
    await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
    expect((await workspace()).monthly_budget_usd).toBeNull();
    await driver.setWorkspace({ monthly_budget_usd: -1 }).expect(400);
  });

  it('once spent, refuses webhooks with 403 budget_exceeded, after the quota, recorded as rejected', async () => {
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    const refused = await driver.sendEvent(channel.webhook_url);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const resetsAt = (await workspace()).budget_resets_at;
    expect(refused.body).toMatchObject({
      status: 403,
      code: 'budget_exceeded',
      title: 'AI budget used up',
      resets_at: resetsAt,
      monthly_budget_usd: 0,
    });
    expect(refused.body.detail).toContain(String(resetsAt));
    const [event] = await driver.eventsOf(channel.id);
    expect(event).toMatchObject({ status: 'rejected', error: 'budget_exceeded' });
    // No chat of the quota is used by a refusal.
    expect((await workspace()).chats_used).toBe(0);

    // The quota is checked first.
    await driver.setWorkspace({ chat_quota: 0 }).expect(200);
    expect((await driver.sendEvent(channel.webhook_url)).body.code).toBe('quota_exceeded');
  });

  it('holds stored events as pending, asking the AI nothing, until the budget is raised', async () => {
    await driver.setWorkspace({ monthly_budget_usd: 2 }).expect(200);
    await receive(5);
    // One at a time: the third finds the budget spent.
    const worker = createWorker(app.ctx, { concurrency: 1 });
    expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(0);
    expect(await statuses()).toEqual({ replied: 2, pending: 3 });
    expect(ai.requests).toHaveLength(2);
    expect((await workspace()).spent_usd).toBe(2);
    const waiting = (await driver.eventsOf(channel.id)).filter((e) => e.status === 'pending');
    expect(waiting.every((e) => e.attempts === 0 && e.error === null)).toBe(true);
    expect((await driver.sendEvent(channel.webhook_url)).body.code).toBe('budget_exceeded');

    await driver.setWorkspace({ monthly_budget_usd: 100 }).expect(200);
    expect(await createWorker(app.ctx).runOnce()).toBe(3);
    expect(await statuses()).toEqual({ replied: 5, rejected: 1 });
  });

  it('wakes an idle worker at once when the budget is raised', async () => {
    await receive(2);
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    // It polls once an hour: only the notification of the raised budget can wake it.
    const worker = createWorker(app.ctx, { pollIntervalMs: 3_600_000 });
    await worker.start();
    try {
      await driver.setWorkspace({ monthly_budget_usd: 5 }).expect(200);
      await eventually(async () => (await statuses()).replied === 2, {
        what: 'the waiting events to be answered',
        timeoutMs: 10_000,
      });
    } finally {
      await worker.stop();
    }
  });

  it('starts again at 0 when a calendar month begins', async () => {
    await driver.setWorkspace({ monthly_budget_usd: 1 }).expect(200);
    await receive(2);
    const worker = createWorker(app.ctx, { concurrency: 1 });
    expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(0);
    // The spend was counted last month.
    await app.ctx.db.query(
      `update workspaces set spend_period_start = spend_period_start - interval '1 month'`,
    );
    expect((await workspace()).spent_usd).toBe(0);
    expect(await worker.runOnce()).toBe(1);
    expect(await statuses()).toEqual({ replied: 2 });
    expect((await workspace()).spent_usd).toBe(1);
    // The ledger keeps both calls, each in its own month's spend.
    const spend = (await driver.api('get', '/spend').expect(200)).body;
    expect(spend.total_usd).toBe(2);
  });

  it('is passed by no more than the calls in flight when 128 run at once', async () => {
    const budget = 100;
    const events = 300;
    await driver.setWorkspace({ monthly_budget_usd: budget }).expect(200);
    await Promise.all(
      Array.from({ length: 8 }, async (_, sender) => {
        for (let i = sender; i < events; i += 8) {
          const res = await driver.sendEvent(channel.webhook_url, { order: { id: i } });
          expect(res.status).toBe(200);
        }
      }),
    );
    // Calls end at different moments, as a model's do.
    let call = 0;
    ai.defaultReply = () => ({ delayMs: 5 + ((call++ * 7) % 31) });
    const worker = createWorker(app.ctx, { concurrency: 128, pollIntervalMs: 50 });
    await worker.start();
    try {
      await eventually(
        async () => {
          const counts = await statuses();
          return (counts.processing ?? 0) === 0 && (counts.replied ?? 0) >= budget;
        },
        { what: 'the budget to be reached and the calls in flight to end', timeoutMs: 60_000 },
      );
    } finally {
      await worker.stop();
    }
    const counts = await statuses();
    const spent = (await workspace()).spent_usd as number;
    const overshoot = spent - budget;
    expect(spent).toBe(counts.replied);
    expect(ai.requests).toHaveLength(spent);
    expect(overshoot).toBeGreaterThanOrEqual(0);
    expect(overshoot).toBeLessThan(128);
    expect(counts).toEqual({ replied: spent, pending: events - spent });
    expect(await createWorker(app.ctx).runOnce()).toBe(0);
  }, 120_000);
});

describe('a model with no known price, while the workspace has a budget', () => {
  const UNPRICED = 'house-model-9';

  it('is not asked: the event fails at once with price_unknown, naming the model', async () => {
    const unpriced = await driver.createChannel({ name: 'Unpriced', ai: { model: UNPRICED } });
    // A priced channel model does not cover an unpriced fallback's.
    const fallback = await driver.createChannel({
      name: 'Unpriced fallback',
      ai: { model: MODEL, fallbacks: [{ provider: 'default', model: UNPRICED }] },
    });
    await driver.setWorkspace({ monthly_budget_usd: 100 }).expect(200);
    const sent = [
      await driver.sendEvent(unpriced.webhook_url, { order: { id: 1 } }),
      await driver.sendEvent(fallback.webhook_url, { order: { id: 2 } }),
    ];
    expect(await createWorker(app.ctx).runOnce()).toBe(2);
    for (const res of sent) {
      const event = (await driver.api('get', `/events/${String(res.body.event_id)}`).expect(200))
        .body;
      expect(event).toMatchObject({ status: 'failed', attempts: 0, calls: [], cost_usd: null });
      expect(event.error).toMatch(
        /^price_unknown: the model "house-model-9" \(provider "default"\)/,
      );
    }
    expect(ai.requests).toHaveLength(0);

    // Priced (at 0, as a model run in-house), it is asked.
    await driver.api('put', `/prices/${UNPRICED}`).send({ input_per_mtok: 0, output_per_mtok: 0 });
    try {
      const again = await driver.sendEvent(unpriced.webhook_url, { order: { id: 3 } });
      await createWorker(app.ctx).runOnce();
      const event = await driver.api('get', `/events/${String(again.body.event_id)}`).expect(200);
      expect(event.body).toMatchObject({ status: 'replied', cost_usd: 0 });
    } finally {
      await driver.api('delete', `/prices/${UNPRICED}`).expect(204);
    }
  });

  it('is not asked by a provider test either', async () => {
    await driver.setWorkspace({ monthly_budget_usd: 100 }).expect(200);
    const test = await driver
      .api('post', '/providers/default/test')
      .send({ model: UNPRICED })
      .expect(200);
    expect(test.body).toEqual({
      ok: false,
      error: expect.stringMatching(/^price_unknown: the model "house-model-9"/),
    });
    expect(ai.requests).toHaveLength(0);
  });
});

describe('provider tests under a budget', () => {
  const testDefault = () => driver.api('post', '/providers/default/test').send({ model: MODEL });

  it('are refused with 403 budget_exceeded once it is spent, in the API and the panel', async () => {
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    const refused = await testDefault();
    expect(refused.status).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({
      status: 403,
      code: 'budget_exceeded',
      title: 'AI budget used up',
      resets_at: (await workspace()).budget_resets_at,
      monthly_budget_usd: 0,
    });

    const page = await client.form('/providers/default/test', { model: MODEL });
    expect(page.status).toBe(403);
    expect(unescapeHtml(page.text)).toContain(
      'Failed: The workspace has spent its AI budget of 0 USD for this month',
    );
    expect(ai.requests).toHaveLength(0);
  });

  it('run together, pass a nearly spent budget by no more than the tests in flight', async () => {
    // Each test's call costs $1: once one is counted, the budget is spent.
    await driver.setWorkspace({ monthly_budget_usd: 0.5 }).expect(200);
    ai.defaultReply = { delayMs: 50 };
    const answers = await Promise.all(Array.from({ length: 12 }, testDefault));
    const passed = answers.filter((res) => res.status === 200 && res.body.ok === true);
    const refused = answers.filter((res) => res.status === 403);
    expect(passed.length + refused.length).toBe(answers.length);
    expect(refused.every((res) => res.body.code === 'budget_exceeded')).toBe(true);
    expect(passed.length).toBeGreaterThanOrEqual(1);
    expect(passed.length).toBeLessThanOrEqual(CALLS_IN_FLIGHT);
    expect(ai.requests).toHaveLength(passed.length);
    expect((await workspace()).spent_usd).toBe(passed.length);
  });
});

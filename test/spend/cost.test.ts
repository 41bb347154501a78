import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { chatCompletion, type FakeReply } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { AI_MAX_ATTEMPTS: '2', WORKER_RETRY_BASE_MS: '0' },
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
  await app.ctx.db.query('delete from spend');
  await app.ctx.db.query('delete from workspace_prices');
  await app.ctx.db.query('update workspaces set spent_usd = 0');
});

/** A chat completion that reports these tokens. */
function answerWith(prompt_tokens: number, completion_tokens: number): FakeReply {
  return {
    body: {
      ...chatCompletion('A reply.'),
      usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
    },
  };
}

async function channelFor(model: string): Promise<ChannelJson> {
  return driver.createChannel({ name: model, ai: { model } });
}

/** Sends one event to the channel, lets the worker answer it, and reads it back. */
async function answered(channel: ChannelJson): Promise<Record<string, unknown>> {
  const sent = await driver.sendEvent(channel.webhook_url);
  expect(sent.status).toBe(200);
  await createWorker(app.ctx).runOnce();
  return (await driver.api('get', `/events/${String(sent.body.event_id)}`).expect(200)).body;
}

/**
 * The workspace's spent_usd once the ledger holds `calls` calls: without a budget the worker
 * does not wait for its spend records, which are written in the background.
 */
async function spentOnceRecorded(by: Driver, calls: number): Promise<number> {
  await eventually(
    async () => {
      const spend = (await by.api('get', '/spend').expect(200)).body;
      const recorded = (spend.by_model as { calls: number }[]).reduce((n, m) => n + m.calls, 0);
      return recorded >= calls || undefined;
    },
    { what: `${calls} calls in the spend ledger` },
  );
  return (await by.api('get', '/workspace').expect(200)).body.spent_usd as number;
}

const putPrice = (model: string, input: number, output: number) =>
  driver
    .api('put', `/prices/${encodeURIComponent(model)}`)
    .send({ input_per_mtok: input, output_per_mtok: output });

describe('what an event cost', () => {
  it('prices a well-known model from the price table shipped with the service', async () => {
    ai.defaultReply = answerWith(1000, 500);
    const event = await answered(await channelFor('gpt-4o-mini'));
    // gpt-4o-mini: $0.15 per million prompt tokens, $0.60 per million completion tokens
    expect(event).toMatchObject({ status: 'replied', model: 'gpt-4o-mini' });
    expect(event.cost_usd).toBeCloseTo((1000 * 0.15 + 500 * 0.6) / 1e6, 12);
  });

  it("prices input read from OpenAI's prompt cache at the table's cache price, and the workspace's own over it", async () => {
    const channel = await channelFor('gpt-4o-mini');
    const cached = {
      body: {
        ...chatCompletion('A reply.'),
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 500,
          total_tokens: 1500,
          prompt_tokens_details: { cached_tokens: 800 },
        },
      },
    };
    ai.defaultReply = cached;
    const event = await answered(channel);
    expect(event.usage).toEqual({
      prompt_tokens: 1000,
      completion_tokens: 500,
      total_tokens: 1500,
      cache_read_tokens: 800,
      cache_write_tokens: 0,
    });
    // gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    expect(event.cost_usd).toBeCloseTo((200 * 0.15 + 800 * 0.075 + 500 * 0.6) / 1e6, 12);

    // The workspace's own price, its cache read price given: it is used over the table's.
    const put = await driver
      .api('put', '/prices/gpt-4o-mini')
      .send({ input_per_mtok: 1, output_per_mtok: 2, cache_read_per_mtok: 0.5 })
      .expect(200);
    expect(put.body).toEqual({
      model: 'gpt-4o-mini',
      input_per_mtok: 1,
      output_per_mtok: 2,
      cache_read_per_mtok: 0.5,
    });
    const own = await answered(channel);
    expect(own.cost_usd).toBeCloseTo((200 * 1 + 800 * 0.5 + 500 * 2) / 1e6, 12);
    // Without one of its own, the table's cache price for the model still applies.
    await putPrice('gpt-4o-mini', 1, 2).expect(200);
    const tables = await answered(channel);
    expect(tables.cost_usd).toBeCloseTo((200 * 1 + 800 * 0.075 + 500 * 2) / 1e6, 12);
    await driver.api('delete', '/prices/gpt-4o-mini').expect(204);
  });

  it("uses the workspace's own price over the table's, to the nanodollar", async () => {
    const channel = await channelFor('gpt-4o-mini');
    expect((await putPrice('gpt-4o-mini', 2, 8)).status).toBe(200);
    ai.defaultReply = answerWith(3, 1);
    const event = await answered(channel);
    // (3 × 2 + 1 × 8) / 1e6 = 0.000014, far finer than a cent
    expect(event.cost_usd).toBeCloseTo(0.000014, 12);
  });

  it('leaves the cost unknown (null) for a model nobody priced', async () => {
    ai.defaultReply = answerWith(1000, 500);
    const event = await answered(await channelFor('house-model-7'));
    expect(event).toMatchObject({ status: 'replied', cost_usd: null });
    const spend = (await driver.api('get', '/spend').expect(200)).body;
    expect(spend.by_model).toEqual([
      {
        provider: 'default',
        model: 'house-model-7',
        calls: 1,
        prompt_tokens: 1000,
        completion_tokens: 500,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: null,
      },
    ]);
    expect(spend.total_usd).toBe(0);
    expect(spend.unpriced_calls).toBe(1);
  });

  it('keeps the usage and cost of an answer without the reply in it: it is billed', async () => {
    const channel = await channelFor('billed-model');
    expect((await putPrice('billed-model', 1, 2)).status).toBe(200);
    ai.enqueue({
      body: {
        ...chatCompletion(null),
        usage: {
          prompt_tokens: 300,
          completion_tokens: 40,
          total_tokens: 340,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
      },
    });
    const event = await answered(channel);
    // (300 × 1 + 40 × 2) / 1e6, in the call, the event, the ledger and the month's spend
    const cost = 380 / 1e6;
    expect(event).toMatchObject({
      status: 'pending',
      usage: {
        prompt_tokens: 300,
        completion_tokens: 40,
        total_tokens: 340,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
      },
      cost_usd: expect.closeTo(cost, 12),
      calls: [
        {
          status: 'error',
          http_status: 200,
          usage: {
            prompt_tokens: 300,
            completion_tokens: 40,
            total_tokens: 340,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
          },
          cost_usd: expect.closeTo(cost, 12),
        },
      ],
    });
    expect(event.error).toMatch(/^The AI server sent an answer without a reply in it/);
    expect(await spentOnceRecorded(driver, 1)).toBeCloseTo(cost, 12);
    const spend = (await driver.api('get', '/spend').expect(200)).body;
    expect(spend).toMatchObject({ total_usd: expect.closeTo(cost, 12), unpriced_calls: 0 });
  });

  it('sums the known costs of every call of an event, retries included', async () => {
    const channel = await driver.createChannel({
      name: 'json',
      ai: { model: 'my-model', response_format: 'json' },
    });
    expect((await putPrice('my-model', 1, 1)).status).toBe(200);
    // The first answer is not JSON (its tokens are paid all the same), the second is.
    ai.enqueue(
      {
        body: {
          ...chatCompletion('not json'),
          usage: { prompt_tokens: 10, completion_tokens: 10 },
        },
      },
      {
        body: {
          ...chatCompletion('{"ok":true}'),
          usage: { prompt_tokens: 20, completion_tokens: 5 },
        },
      },
    );
    const sent = await driver.sendEvent(channel.webhook_url);
    await createWorker(app.ctx).runOnce();
    await createWorker(app.ctx).runOnce();
    const event = (await driver.api('get', `/events/${String(sent.body.event_id)}`).expect(200))
      .body;
    expect(event).toMatchObject({ status: 'replied', attempts: 2 });
    expect(event.cost_usd).toBeCloseTo((20 + 25) / 1e6, 12);
    expect(await spentOnceRecorded(driver, 2)).toBeCloseTo(45 / 1e6, 12);
  });

  describe('on an app that tries 25 times', () => {
    // 25 attempts of one call each, every answer not JSON: each attempt's tokens are paid, and
    // the event lists the last 20 calls.
    const attempts = 25;
    const { app: manyApp, driver: many } = useTestApp({
      env: () => ({ ...ai.env(), AI_MAX_ATTEMPTS: String(attempts), WORKER_RETRY_BASE_MS: '0' }),
    });

    it('sums over the 20 calls an event lists once older ones are dropped', async () => {
      const channel = await many.createChannel({
        name: 'json',
        ai: { model: 'my-model', response_format: 'json' },
      });
      await many
        .api('put', '/prices/my-model')
        .send({ input_per_mtok: 1, output_per_mtok: 0 })
        .expect(200);
      // Attempt n reads n tokens: every call costs n / 1e6, so which calls are summed shows.
      ai.enqueue(
        ...Array.from({ length: attempts }, (_, i) => ({
          body: {
            ...chatCompletion('not json'),
            usage: { prompt_tokens: i + 1, completion_tokens: 0 },
          },
        })),
      );
      const sent = await many.sendEvent(channel.webhook_url);
      const read = async () =>
        (await many.api('get', `/events/${String(sent.body.event_id)}`).expect(200)).body;
      for (let i = 0; i < attempts && (await read()).status !== 'failed'; i++) {
        await createWorker(manyApp.ctx).runOnce();
      }
      const event = await read();
      expect(event).toMatchObject({ status: 'failed', attempts });
      const calls = event.calls as { cost_usd: number }[];
      expect(calls).toHaveLength(20);
      expect(calls.map((call) => call.cost_usd * 1e6)).toEqual(
        Array.from({ length: 20 }, (_, i) => expect.closeTo(i + 6, 6)),
      );
      const listed = calls.reduce((sum, call) => sum + call.cost_usd, 0);
      // 6 + 7 + … + 25 millionths: the five dropped calls are no longer in it.
      expect(event.cost_usd).toBeCloseTo(listed, 12);
      expect(event.cost_usd).toBeCloseTo(310 / 1e6, 12);
      // The workspace still paid for all 25.
      expect(await spentOnceRecorded(many, attempts)).toBeCloseTo(325 / 1e6, 12);
    });
  });

  describe('on an app with the echo stand-in', () => {
    const { app: echoApp, driver: echo } = useTestApp();

    it('counts the echo stand-in as free', async () => {
      const channel = await echo.createChannel();
      const sent = await echo.sendEvent(channel.webhook_url);
      await createWorker(echoApp.ctx).runOnce();
      const event = (await echo.api('get', `/events/${String(sent.body.event_id)}`).expect(200))
        .body;
      expect(event).toMatchObject({ status: 'replied', cost_usd: 0 });
    });
  });

  it('shows the cost in the events list and counts it in /metrics', async () => {
    ai.defaultReply = answerWith(1_000_000, 0);
    const channel = await channelFor('priced-model');
    expect((await putPrice('priced-model', 1.25, 0)).status).toBe(200);
    const event = await answered(channel);
    expect(event.cost_usd).toBe(1.25);
    const listed = await driver.api('get', `/events?channel_id=${channel.id}`).expect(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: event.id, cost_usd: 1.25 })]);
    const metrics = await request(app.baseUrl).get('/metrics');
    expect(metrics.text).toMatch(
      /hookprompt_ai_cost_usd_total\{provider="default",model="priced-model"\} 1\.25/,
    );
  });
});

describe('GET /api/v1/spend', () => {
  it('sums every call by day, model and channel, this UTC month by default', async () => {
    expect((await putPrice('model-a', 1, 0)).status).toBe(200);
    expect((await putPrice('model-b', 10, 0)).status).toBe(200);
    const a = await channelFor('model-a');
    const b = await channelFor('model-b');
    ai.defaultReply = answerWith(100, 7);
    await answered(a);
    await answered(a);
    await answered(b);
    // The first call is moved to yesterday, or to the month's first instant on its first day.
    await app.ctx.db.query(
      `update spend set created_at = greatest(date_trunc('month', now() at time zone 'utc') at time zone 'utc',
                                              now() - interval '1 day')
       where id = (select min(id) from spend)`,
    );
    const spend = (await driver.api('get', '/spend').expect(200)).body;
    expect(spend.total_usd).toBeCloseTo(0.0001 + 0.0001 + 0.001, 12);
    expect(spend.by_model).toEqual([
      {
        provider: 'default',
        model: 'model-b',
        calls: 1,
        prompt_tokens: 100,
        completion_tokens: 7,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: expect.closeTo(0.001, 12),
      },
      {
        provider: 'default',
        model: 'model-a',
        calls: 2,
        prompt_tokens: 200,
        completion_tokens: 14,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_usd: expect.closeTo(0.0002, 12),
      },
    ]);
    expect(spend.by_channel).toEqual([
      { channel_id: b.id, calls: 1, cost_usd: expect.closeTo(0.001, 12) },
      { channel_id: a.id, calls: 2, cost_usd: expect.closeTo(0.0002, 12) },
    ]);
    const days = spend.by_day as { day: string; calls: number; cost_usd: number }[];
    const now = new Date();
    const daysInMonth = new Date(
      Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0),
    ).getUTCDate();
    expect(days).toHaveLength(daysInMonth);
    expect(days.reduce((sum, day) => sum + day.calls, 0)).toBe(3);
    const today = now.toISOString().slice(0, 10);
    const withCalls = days.filter((day) => day.calls > 0);
    if (now.getUTCDate() === 1) {
      expect(withCalls).toEqual([{ day: today, calls: 3, cost_usd: expect.closeTo(0.0012, 12) }]);
    } else {
      expect(withCalls).toEqual([
        { day: expect.any(String), calls: 1, cost_usd: expect.closeTo(0.0001, 12) },
        { day: today, calls: 2, cost_usd: expect.closeTo(0.0011, 12) },
      ]);
    }
  });

  it('takes a range, and refuses one that is empty or too long', async () => {
    await driver
      .api('get', '/spend?from=2026-01-01&to=2026-01-03')
      .expect(200)
      .expect((res) => {
        expect(res.body).toEqual({
          total_usd: 0,
          unpriced_calls: 0,
          by_day: [
            { day: '2026-01-01', calls: 0, cost_usd: 0 },
            { day: '2026-01-02', calls: 0, cost_usd: 0 },
          ],
          by_model: [],
          by_channel: [],
        });
      });
    await driver.api('get', '/spend?from=2026-01-03&to=2026-01-01').expect(400);
    await driver.api('get', '/spend?from=2024-01-01&to=2026-01-01').expect(400);
    await driver.api('get', '/spend?month=1').expect(400);
  });
});

describe('the prices API', () => {
  it('sets, lists and removes the workspace’s own prices, model names URL-encoded', async () => {
    const model = 'openai/gpt-4o mini';
    const put = await putPrice(model, 0.5, 1.5);
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ model, input_per_mtok: 0.5, output_per_mtok: 1.5 });
    expect((await putPrice(model, 0.25, 1)).body).toMatchObject({ input_per_mtok: 0.25 });
    expect((await driver.api('get', '/prices').expect(200)).body).toEqual({
      data: [{ model, input_per_mtok: 0.25, output_per_mtok: 1 }],
    });
    const path = `/prices/${encodeURIComponent(model)}`;
    await driver.api('delete', path).expect(204);
    await driver.api('delete', path).expect(404);
    expect((await driver.api('get', '/prices').expect(200)).body).toEqual({ data: [] });
  });

  it('refuses negative or missing prices', async () => {
    expect((await putPrice('m', -1, 0)).status).toBe(400);
    const missing = await driver.api('put', '/prices/m').send({ input_per_mtok: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('validation_failed');
  });
});

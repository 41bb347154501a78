import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { fakeReplyTo } from '../support/fake-ai-server.js';
import { FAKE_ANTHROPIC_KEY } from '../support/fake-anthropic-server.js';
import { useFakeAnthropic, useTestApp } from '../support/harness.js';

const api = useFakeAnthropic();
const { app, driver } = useTestApp({
  env: () => ({ ...api.env(), AI_MAX_ATTEMPTS: '3', WORKER_RETRY_BASE_MS: '0' }),
});

afterEach(() => app.ctx.db.query('delete from events'));

async function channelWith(ai: Record<string, unknown>, template = 'Order {{order.id}}') {
  const res = await driver.api('post', '/channels').send({ name: 'Claude', template, ai });
  expect(res.status).toBe(201);
  return res.body as ChannelJson;
}

async function receive(channel: ChannelJson, body: unknown = { order: { id: 42 } }) {
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

async function event(id: string) {
  return (await driver.api('get', `/events/${id}`).expect(200)).body as Record<string, unknown>;
}

describe('a channel answered through Anthropic', () => {
  it('stores the reply with the model and the usage, cached input counted', async () => {
    const channel = await channelWith({ system_prompt: 'You confirm orders.', max_tokens: 200 });
    api.enqueue({
      text: 'Order 42 is confirmed.',
      usage: { input_tokens: 30, cache_read_input_tokens: 70, output_tokens: 9 },
    });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();

    // Prompt caching is on by default: the system prompt closes the cached prefix.
    expect(api.requests[0]?.body).toEqual({
      model: 'claude-fake',
      max_tokens: 200,
      system: [{ type: 'text', text: 'You confirm orders.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Order 42' }],
    });
    expect(await event(id)).toMatchObject({
      status: 'replied',
      reply: 'Order 42 is confirmed.',
      model: 'claude-fake',
      usage: {
        prompt_tokens: 100,
        completion_tokens: 9,
        total_tokens: 109,
        cache_read_tokens: 70,
        cache_write_tokens: 0,
      },
      error: null,
    });
  });

  it('keeps the reply tool’s input as the reply of a JSON Schema channel, and retries one that breaks it', async () => {
    const schema = {
      type: 'object',
      properties: { summary: { type: 'string' }, priority: { enum: ['low', 'high'] } },
      required: ['summary', 'priority'],
    };
    const channel = await channelWith({ response_format: { json_schema: schema } });
    api.enqueue(
      { toolInput: { summary: 'late parcel', priority: 'urgent' } },
      { toolInput: { summary: 'late parcel', priority: 'high' } },
    );
    const id = await receive(channel);
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    expect(await event(id)).toMatchObject({
      status: 'pending',
      error: 'reply_invalid: /priority must be equal to one of the allowed values',
    });
    await worker.runOnce();
    const stored = await event(id);
    expect(stored.status).toBe('replied');
    expect(JSON.parse(stored.reply as string)).toEqual({
      summary: 'late parcel',
      priority: 'high',
    });
    expect(api.requests[0]?.body).toMatchObject({
      tools: [{ name: 'reply', input_schema: schema }],
      tool_choice: { type: 'tool', name: 'reply' },
    });
  });

  it('keeps the usage and cost of an answer without the reply tool call: it is billed', async () => {
    await driver
      .api('put', '/prices/claude-fake')
      .send({ input_per_mtok: 3, output_per_mtok: 15 })
      .expect(200);
    const channel = await channelWith({ response_format: 'json' });
    api.enqueue({
      body: {
        type: 'message',
        content: [{ type: 'text', text: 'no tool' }],
        usage: { input_tokens: 1000, output_tokens: 100 },
      },
    });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 100,
      total_tokens: 1100,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    };
    const cost = (1000 * 3 + 100 * 15) / 1e6;
    expect(await event(id)).toMatchObject({
      status: 'pending',
      error: expect.stringMatching(/^The AI server sent an answer without the reply tool call/),
      usage,
      cost_usd: expect.closeTo(cost, 12),
      calls: [{ status: 'error', http_status: 200, usage, cost_usd: expect.closeTo(cost, 12) }],
    });
    // Without a budget the worker does not wait for the ledger's record.
    await eventually(
      async () => (await driver.api('get', '/spend').expect(200)).body.total_usd > 0 || undefined,
      { what: 'the call in the spend ledger' },
    );
    const spend = (await driver.api('get', '/spend').expect(200)).body;
    expect(spend.total_usd).toBeCloseTo(cost, 12);
    await driver.api('delete', '/prices/claude-fake').expect(204);
  });

  it('answers a json channel through the tool as a JSON object', async () => {
    const channel = await channelWith({ response_format: 'json' });
    api.enqueue({ toolInput: { ok: true, items: [1, 2] } });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    const stored = await event(id);
    expect(stored.status).toBe('replied');
    expect(JSON.parse(stored.reply as string)).toEqual({ ok: true, items: [1, 2] });
  });

  it('sends the thread’s earlier exchanges as user/assistant pairs', async () => {
    const channel = await channelWith({ thread_key: '{{customer}}', history: 2 }, '{{text}}');
    for (const text of ['first', 'second', 'third']) {
      await receive(channel, { customer: 'c-7', text });
    }
    const worker = createWorker(app.ctx);
    for (let i = 0; i < 3; i++) await worker.runOnce();
    expect(api.requests.map((r) => r.prompt)).toEqual(['first', 'second', 'third']);
    // The history's last turn closes the cached prefix: the next event of the thread reads it.
    expect(api.requests[2]?.body.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: fakeReplyTo('first') },
      { role: 'user', content: 'second' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: fakeReplyTo('second'), cache_control: { type: 'ephemeral' } },
        ],
      },
      { role: 'user', content: 'third' },
    ]);
  });

  it('caches for an hour when asked, and not at all when prompt caching is off', async () => {
    const hour = await channelWith({ system_prompt: 'Be brief.', prompt_cache: '1h' });
    const off = await channelWith({ system_prompt: 'Be brief.', prompt_cache: 'off' });
    await receive(hour);
    await receive(off);
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    const bodies = api.requests.map((request) => request.body as { system: unknown });
    expect(bodies.map((body) => body.system)).toEqual(
      expect.arrayContaining([
        [
          {
            type: 'text',
            text: 'Be brief.',
            cache_control: { type: 'ephemeral', ttl: '1h' },
          },
        ],
        'Be brief.',
      ]),
    );
  });

  it("prices cache reads and writes at the workspace's cache prices, else the input price", async () => {
    await driver
      .api('put', '/prices/claude-fake')
      .send({ input_per_mtok: 10, output_per_mtok: 20, cache_read_per_mtok: 1 })
      .expect(200);
    const cacheTokensSpent = async () => {
      const spend = (await driver.api('get', '/spend').expect(200)).body;
      const row = (spend.by_model as Record<string, unknown>[]).find(
        (model) => model.model === 'claude-fake',
      );
      return {
        read: Number(row?.cache_read_tokens ?? 0),
        write: Number(row?.cache_write_tokens ?? 0),
      };
    };
    const before = await cacheTokensSpent();
    const channel = await channelWith({ system_prompt: 'You confirm orders.' });
    api.enqueue({
      usage: {
        input_tokens: 100,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 500,
        output_tokens: 10,
      },
    });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    const stored = await event(id);
    expect(stored.usage).toEqual({
      prompt_tokens: 1600,
      completion_tokens: 10,
      total_tokens: 1610,
      cache_read_tokens: 1000,
      cache_write_tokens: 500,
    });
    // 100 × 10 + 1000 × 1 + 500 × 10 (no write price: input's) + 10 × 20, per million.
    expect(stored.cost_usd).toBeCloseTo(7_200 / 1_000_000, 12);
    // The spend report counts them by model (the file's earlier events are in it too).
    expect(await cacheTokensSpent()).toEqual({
      read: before.read + 1000,
      write: before.write + 500,
    });
    await driver.api('delete', '/prices/claude-fake').expect(204);
  });
});

describe('Anthropic errors in Brain Logs', () => {
  it('retries an overloaded API (529) and a 500, then keeps the reply', async () => {
    const channel = await channelWith({});
    api.enqueue({ status: 529 }, { status: 500 });
    const id = await receive(channel);
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    expect(await event(id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      error: 'The AI server failed (HTTP 529): overloaded_error: fake overloaded_error',
    });
    await worker.runOnce();
    await worker.runOnce();
    expect(await event(id)).toMatchObject({
      status: 'replied',
      attempts: 3,
      reply: fakeReplyTo('Order 42'),
    });
  });

  it('waits the retry-after of a 429 before asking again', async () => {
    const channel = await channelWith({});
    api.enqueue({ status: 429, headers: { 'retry-after': '600' } });
    const id = await receive(channel);
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    expect(await event(id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      error:
        'The AI server failed (HTTP 429): rate_limit_error: fake rate_limit_error It asked to wait 600 s.',
    });
    // Not due for ten minutes: the worker finds nothing to do, and the API is not asked again.
    expect(await worker.runOnce()).toBe(0);
    expect(api.requests).toHaveLength(1);
  });

  it('fails at once on a refused request (400), without retrying', async () => {
    const channel = await channelWith({});
    api.enqueue({
      status: 400,
      error: { type: 'invalid_request_error', message: 'prompt is too long' },
    });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    expect(await event(id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error:
        'The AI server refused the request (HTTP 400): invalid_request_error: prompt is too long',
    });
  });

  it('never shows the API key, even when the API quotes it', async () => {
    const channel = await channelWith({});
    api.enqueue({
      status: 403,
      error: {
        type: 'permission_error',
        message: `key ${FAKE_ANTHROPIC_KEY} may not use this model`,
      },
    });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    const stored = await event(id);
    expect(stored.status).toBe('failed');
    expect(stored.error).toBe(
      'The AI server refused the request (HTTP 403): permission_error: key [redacted] may not use this model',
    );
    const listed = await driver.api('get', `/events?channel_id=${channel.id}`).expect(200);
    expect(JSON.stringify(listed.body)).not.toContain(FAKE_ANTHROPIC_KEY);
    expect(app.logText()).not.toContain(FAKE_ANTHROPIC_KEY);
  });
});

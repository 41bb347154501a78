import { afterEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({
  ai: true,
  env: { AI_MAX_ATTEMPTS: '2', WORKER_RETRY_BASE_MS: '0' },
});

afterEach(() => app.ctx.db.query('delete from events'));

const orderSchema = {
  type: 'object',
  properties: { summary: { type: 'string' }, total: { type: 'number' } },
  required: ['summary', 'total'],
};

async function channelWith(ai: Record<string, unknown>, template = 'Order {{order.id}}') {
  const res = await driver.api('post', '/channels').send({ name: 'AI', template, ai });
  expect(res.status).toBe(201);
  return res.body as ChannelJson & { ai: Record<string, unknown> };
}

async function receive(channel: ChannelJson, body: unknown = { order: { id: 42 } }) {
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

async function event(id: string) {
  return (await driver.api('get', `/events/${id}`).expect(200)).body as Record<string, unknown>;
}

describe('channel ai settings in the API', () => {
  it('stores, shows and merges the settings', async () => {
    const channel = await channelWith({ model: 'gpt-orders', temperature: 0.3, history: 2 });
    expect(channel.ai).toEqual({
      provider: 'default',
      fallbacks: [],
      model: 'gpt-orders',
      system_prompt: null,
      temperature: 0.3,
      max_tokens: null,
      response_format: null,
      thread_key: null,
      history: 2,
      tools: [],
      max_tool_rounds: 4,
      prompt_cache: '5m',
      images: [],
      reply_cache_s: 0,
      redact: null,
      restore: null,
      spotlight: null,
    });
    const patched = await driver
      .updateChannel(channel.id, { ai: { temperature: null, response_format: 'json' } })
      .expect(200);
    expect(patched.body.ai).toMatchObject({
      model: 'gpt-orders',
      temperature: null,
      response_format: 'json',
      history: 2,
    });
    const cleared = await driver.updateChannel(channel.id, { ai: null }).expect(200);
    const {
      provider,
      fallbacks,
      tools,
      max_tool_rounds,
      prompt_cache,
      images,
      reply_cache_s,
      ...others
    } = cleared.body.ai as Record<string, unknown>;
    expect([
      provider,
      fallbacks,
      tools,
      max_tool_rounds,
      prompt_cache,
      images,
      reply_cache_s,
    ]).toEqual(['default', [], [], 4, '5m', [], 0]);
    expect(Object.values(others).every((v) => v === null)).toBe(true);
  });

  it('refuses out-of-range values and a JSON Schema that does not compile, naming the problem', async () => {
    const channel = await channelWith({});
    const res = await driver.updateChannel(channel.id, {
      ai: { temperature: 3, max_tokens: 100_001, history: 51 },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([
      'ai.temperature',
      'ai.max_tokens',
      'ai.history',
    ]);

    const schema = await driver.updateChannel(channel.id, {
      ai: { response_format: { json_schema: { type: 'object', required: 'summary' } } },
    });
    expect(schema.status).toBe(400);
    expect(schema.body.detail).toMatch(
      /^ai\.response_format\.json_schema: is not a usable JSON Schema: .*required/,
    );
    const unknown = await driver.updateChannel(channel.id, { ai: { model: 'x', colour: 'red' } });
    expect(unknown.status).toBe(400);
  });
});

describe('the AI request', () => {
  it('carries every setting as chat-completions fields', async () => {
    const channel = await channelWith(
      {
        model: 'gpt-orders',
        system_prompt: 'You summarise orders for {{shop}}.',
        temperature: 0.7,
        max_tokens: 256,
        response_format: { json_schema: orderSchema },
        prompt_cache: 'off',
      },
      'Order {{order.id}} for {{customer.email}}',
    );
    ai.enqueue({ body: chatCompletion('{"summary": "ok", "total": 3}') });
    const id = await receive(channel, { shop: 'Acme', order: { id: 7 } });
    await createWorker(app.ctx).runOnce();

    expect(ai.requests[0]?.body).toEqual({
      model: 'gpt-orders',
      messages: [
        { role: 'system', content: 'You summarise orders for Acme.' },
        { role: 'user', content: 'Order 7 for ' },
      ],
      temperature: 0.7,
      max_tokens: 256,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'reply', schema: orderSchema },
      },
    });
    const stored = await event(id);
    expect(stored).toMatchObject({
      status: 'replied',
      reply: '{"summary": "ok", "total": 3}',
      model: 'gpt-orders',
      usage: {
        prompt_tokens: 1,
        completion_tokens: 1,
        total_tokens: 2,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
      },
      missing: ['customer.email'],
    });
    expect(stored.latency_ms).toEqual(expect.any(Number));
  });

  it('names AI_MODEL and sends no optional field for a channel without settings', async () => {
    const channel = await channelWith({});
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    // Prompt caching is on by default: requests of one channel share a cache key.
    expect(ai.requests[0]?.body).toEqual({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'Order 42' }],
      prompt_cache_key: `hp-${channel.id}`,
    });
    expect(await event(id)).toMatchObject({ model: 'fake-model', missing: [] });
  });
});

describe('structured replies', () => {
  it('retries a reply that breaks the schema and fails with reply_invalid and the first error', async () => {
    const channel = await channelWith({ response_format: { json_schema: orderSchema } });
    ai.enqueue(
      { body: chatCompletion('{"summary": "ok", "total": "three"}') },
      { body: chatCompletion('{"summary": "ok"}') },
    );
    const id = await receive(channel);
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    expect(await event(id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      error: 'reply_invalid: /total must be number',
    });
    await worker.runOnce();
    expect(await event(id)).toMatchObject({
      status: 'failed',
      attempts: 2,
      reply: null,
      error:
        "reply_invalid: the reply must have required property 'total' Gave up after 2 attempts.",
      usage: { total_tokens: 2 },
    });
  });

  it('retries a reply that is not JSON, and keeps the one that fits', async () => {
    const channel = await channelWith({ response_format: 'json' });
    ai.enqueue(
      { body: chatCompletion('Here you go: {"a": 1}') },
      { body: chatCompletion('{"a": 1}') },
    );
    const id = await receive(channel);
    const worker = createWorker(app.ctx);
    await worker.runOnce();
    expect((await event(id)).error).toMatch(/^reply_invalid: the reply is not JSON/);
    await worker.runOnce();
    expect(await event(id)).toMatchObject({ status: 'replied', reply: '{"a": 1}', error: null });
    expect(ai.requests[0]?.body).toMatchObject({ response_format: { type: 'json_object' } });
  });
});

describe('provider back-pressure', () => {
  it('waits the Retry-After of a 429 before asking again, woken by the retry itself, not the poll', async () => {
    const channel = await channelWith({});
    ai.enqueue({ status: 429, headers: { 'Retry-After': '2' } });
    // A long poll interval: only the retry's own wake-up can bring the second call on time.
    const worker = createWorker(app.ctx, { pollIntervalMs: 60_000 });
    await worker.start();
    try {
      const id = await receive(channel);
      await ai.waitForRequests(2);
      const [first, second] = ai.requests;
      const waited = (second?.receivedAt ?? 0) - (first?.answeredAt ?? 0);
      expect(waited).toBeGreaterThanOrEqual(2000);
      // Within 100 ms on a quiet machine; the bound here leaves room for a loaded CI host while
      // still being far below the 60 s poll interval.
      expect(waited).toBeLessThan(3000);
      await expect.poll(async () => (await event(id)).status).toBe('replied');
    } finally {
      await worker.stop();
    }
  });
});

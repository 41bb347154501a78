import request from 'supertest';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { chatCompletion, type FakeReply } from '../support/fake-ai-server.js';
import { FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { useFakeAi, useTestApp } from '../support/harness.js';

// Two AI servers: `primary` is the server's own (the provider `default`), `second` a provider
// the workspace adds as `backup`.
const second = useFakeAi();
const {
  app,
  driver,
  ai: primary,
} = useTestApp({
  ai: true,
  env: {
    AI_MAX_ATTEMPTS: '3',
    AI_TIMEOUT_MS: '400',
    WORKER_RETRY_BASE_MS: '0',
    PROVIDERS_ALLOW_PRIVATE: 'true',
  },
});
let backupId: string;

const BACKUP_KEY = 'sk-backup-key-never-shown-0123456789';

beforeAll(async () => {
  const res = await driver
    .api('post', '/providers')
    .send({ name: 'backup', kind: 'openai', base_url: second.baseUrl, api_key: BACKUP_KEY });
  expect(res.status).toBe(201);
  backupId = res.body.id;
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
  await app.ctx.db.query('delete from channels');
  // A key follows its URL: moving the provider back needs its key again.
  await driver
    .api('patch', `/providers/${backupId}`)
    .send({ base_url: second.baseUrl, api_key: BACKUP_KEY });
});

async function channelWithBackup(ai: Record<string, unknown> = {}): Promise<ChannelJson> {
  return driver.createChannel({
    name: 'With backup',
    ai: { fallbacks: [{ provider: 'backup', model: 'backup-model' }], ...ai },
  });
}

async function receive(channel: ChannelJson): Promise<string> {
  const res = await driver.sendEvent(channel.webhook_url, { order: { id: 7 } });
  expect(res.status).toBe(200);
  return String(res.body.event_id);
}

async function event(id: string) {
  return (await driver.api('get', `/events/${id}`).expect(200)).body as Record<string, unknown> & {
    calls: Record<string, unknown>[];
  };
}

const failures: [string, FakeReply, number | null][] = [
  ['529 (overloaded)', { status: 529 }, 529],
  ['503', { status: 503 }, 503],
  ['429 with a long Retry-After', { status: 429, headers: { 'Retry-After': '120' } }, 429],
  ['a timeout', { hang: true }, null],
];

describe('fallbacks within one attempt', () => {
  it.each(failures)(
    'asks the fallback at once after %s, and keeps both calls on the event',
    async (_what, failure, httpStatus) => {
      const channel = await channelWithBackup();
      primary.enqueue(failure);
      const id = await receive(channel);
      await createWorker(app.ctx).runOnce();

      const stored = await event(id);
      expect(stored).toMatchObject({
        status: 'replied',
        reply: 'Fake model reply to: Order 7',
        attempts: 1,
        provider: 'backup',
        model: 'backup-model',
        usage: {
          prompt_tokens: 1,
          completion_tokens: 1,
          total_tokens: 2,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
      });
      expect(stored.calls).toEqual([
        {
          provider: 'default',
          model: 'fake-model',
          status: 'error',
          http_status: httpStatus,
          error: expect.any(String),
          latency_ms: expect.any(Number),
          usage: null,
          cost_usd: null,
        },
        {
          provider: 'backup',
          model: 'backup-model',
          status: 'ok',
          http_status: 200,
          error: null,
          latency_ms: expect.any(Number),
          usage: {
            prompt_tokens: 1,
            completion_tokens: 1,
            total_tokens: 2,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
          },
          cost_usd: null,
        },
      ]);
      expect(primary.requests).toHaveLength(1);
      expect(second.requests).toHaveLength(1);
      expect((second.requests[0]?.body as { model: string }).model).toBe('backup-model');
      expect(second.requests[0]?.headers.authorization).toBe(`Bearer ${BACKUP_KEY}`);
    },
  );

  it('does not fall back after a 400: the attempt ends and the event fails', async () => {
    const channel = await channelWithBackup();
    primary.enqueue({ status: 400, body: { error: { message: 'bad request' } } });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();

    const stored = await event(id);
    expect(stored).toMatchObject({ status: 'failed', attempts: 1, provider: 'default' });
    expect(stored.calls).toEqual([
      expect.objectContaining({ provider: 'default', status: 'error', http_status: 400 }),
    ]);
    expect(second.requests).toHaveLength(0);
  });

  it('does not fall back after a reply of the wrong shape: the attempt is retried later', async () => {
    const channel = await channelWithBackup({ response_format: 'json' });
    primary.enqueue({ body: chatCompletion('not json at all') });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();

    const stored = await event(id);
    expect(stored).toMatchObject({ status: 'pending', attempts: 1 });
    expect(String(stored.error)).toMatch(/^reply_invalid: /);
    expect(stored.calls).toEqual([
      expect.objectContaining({
        provider: 'default',
        status: 'error',
        http_status: 200,
        error: expect.stringMatching(/^reply_invalid: /),
        usage: {
          prompt_tokens: 1,
          completion_tokens: 1,
          total_tokens: 2,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
      }),
    ]);
    expect(second.requests).toHaveLength(0);
  });

  it('retries an attempt whose providers all failed, starting again at the channel provider', async () => {
    const channel = await channelWithBackup();
    primary.enqueue({ status: 503 });
    second.enqueue({ status: 502 });
    const id = await receive(channel);
    const worker = createWorker(app.ctx);
    await worker.runOnce();

    const waiting = await event(id);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1, provider: 'backup' });
    expect(waiting.calls.map((c) => [c.provider, c.http_status])).toEqual([
      ['default', 503],
      ['backup', 502],
    ]);

    await worker.runOnce();
    const done = await event(id);
    expect(done).toMatchObject({
      status: 'replied',
      attempts: 2,
      provider: 'default',
      model: 'fake-model',
    });
    expect(done.calls.map((c) => [c.provider, c.status])).toEqual([
      ['default', 'error'],
      ['backup', 'error'],
      ['default', 'ok'],
    ]);
    expect(primary.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(1);
  });

  it('ends failed after the last attempt, with every call kept', async () => {
    const channel = await channelWithBackup();
    primary.defaultReply = { status: 500 };
    second.defaultReply = { status: 500 };
    const id = await receive(channel);
    const worker = createWorker(app.ctx);
    for (let attempt = 0; attempt < 3; attempt++) await worker.runOnce();

    const stored = await event(id);
    expect(stored).toMatchObject({ status: 'failed', attempts: 3 });
    expect(String(stored.error)).toMatch(/Gave up after 3 attempts/);
    expect(stored.calls).toHaveLength(6);
  });

  it('uses a changed provider at once, and names the key nowhere', async () => {
    const channel = await channelWithBackup();
    // The backup now points at the primary's server.
    await driver.api('patch', `/providers/${backupId}`).send({ base_url: primary.baseUrl });
    primary.enqueue({ status: 503 });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();

    expect(await event(id)).toMatchObject({ status: 'replied', provider: 'backup' });
    expect(primary.requests).toHaveLength(2);
    expect(second.requests).toHaveLength(0);
    expect(app.logText()).not.toContain(BACKUP_KEY);
  });

  it('asks only the channel provider when it names one of the workspace', async () => {
    const channel = await driver.createChannel({
      name: 'Backup only',
      ai: { provider: 'backup', model: 'own-model' },
    });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    expect(await event(id)).toMatchObject({
      status: 'replied',
      provider: 'backup',
      model: 'own-model',
    });
    expect(primary.requests).toHaveLength(0);
    expect((second.requests[0]?.body as { model: string }).model).toBe('own-model');
  });

  it('counts calls by provider, model and outcome in /metrics', async () => {
    // Models are counted by name when priced (the workspace's prices or the table), else as
    // `other`: these two are the workspace's.
    const priced = ['fake-model', 'backup-model'];
    for (const model of priced) {
      await driver
        .api('put', `/prices/${model}`)
        .send({ input_per_mtok: 0, output_per_mtok: 0 })
        .expect(200);
    }
    try {
      const channel = await channelWithBackup();
      primary.enqueue({ status: 503 });
      await receive(channel);
      await createWorker(app.ctx).runOnce();
      const metrics = (await request(app.baseUrl).get('/metrics')).text;
      expect(metrics).toMatch(
        /hookprompt_ai_calls_total\{provider="default",model="fake-model",outcome="error"\} [1-9]/,
      );
      expect(metrics).toMatch(
        /hookprompt_ai_calls_total\{provider="backup",model="backup-model",outcome="ok"\} [1-9]/,
      );
    } finally {
      for (const model of priced) await driver.api('delete', `/prices/${model}`).expect(204);
    }
  });

  it('prices each call on its own and counts the spend under the provider that answered', async () => {
    const channel = await channelWithBackup({
      fallbacks: [{ provider: 'backup', model: 'priced-backup-model' }],
    });
    await driver
      .api('put', '/prices/priced-backup-model')
      .send({ input_per_mtok: 2, output_per_mtok: 8 })
      .expect(200);
    primary.enqueue({ status: 529 });
    second.enqueue({
      body: { ...chatCompletion('Priced'), usage: { prompt_tokens: 300, completion_tokens: 100 } },
    });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();

    // (300 × 2 + 100 × 8) / 1e6
    const cost = 0.0014;
    const stored = await event(id);
    expect(stored).toMatchObject({ status: 'replied', provider: 'backup' });
    expect(stored.calls).toHaveLength(2);
    expect(stored.calls[0]).toMatchObject({ provider: 'default', http_status: 529, usage: null });
    expect(stored.calls[0]?.cost_usd).toBeNull();
    expect(stored.calls[1]).toMatchObject({ provider: 'backup', model: 'priced-backup-model' });
    expect(stored.calls[1]?.cost_usd).toBeCloseTo(cost, 12);
    expect(stored.cost_usd).toBeCloseTo(cost, 12);

    const spend = (await driver.api('get', '/spend').expect(200)).body as {
      by_model: Record<string, unknown>[];
    };
    const priced = spend.by_model.filter((row) => row.model === 'priced-backup-model');
    expect(priced).toHaveLength(1);
    expect(priced[0]).toMatchObject({
      provider: 'backup',
      calls: 1,
      prompt_tokens: 300,
      completion_tokens: 100,
    });
    expect(priced[0]?.cost_usd).toBeCloseTo(cost, 12);
    const metrics = (await request(app.baseUrl).get('/metrics')).text;
    expect(metrics).toMatch(
      /hookprompt_ai_cost_usd_total\{provider="backup",model="priced-backup-model"\} 0\.0014/,
    );
  });

  it('keeps the calls of an earlier outcome in its history when the event is replayed', async () => {
    const channel = await channelWithBackup();
    primary.enqueue({ status: 503 });
    const id = await receive(channel);
    await createWorker(app.ctx).runOnce();
    await driver.api('post', `/events/${id}/replay`).expect(202);

    const replayed = await event(id);
    expect(replayed).toMatchObject({ status: 'pending', provider: null, calls: [] });
    const [earlier] = replayed.history as Record<string, unknown>[];
    expect(earlier).toMatchObject({ provider: 'backup', model: 'backup-model' });
    expect((earlier?.calls as unknown[]).length).toBe(2);
  });
});

describe('a workspace provider of kind anthropic', () => {
  it('answers as a fallback through the Messages API, with its own key', async () => {
    const claude = await FakeAnthropicServer.start();
    try {
      const added = await driver
        .api('post', '/providers')
        .send({
          name: 'claude',
          kind: 'anthropic',
          base_url: claude.baseUrl,
          api_key: claude.apiKey,
        })
        .expect(201);
      const channel = await driver.createChannel({
        name: 'Falls back to Claude',
        ai: { fallbacks: [{ provider: 'claude', model: 'claude-fake' }] },
      });
      primary.enqueue({ status: 529 });
      claude.enqueue({ text: 'Order 7 is confirmed.' });
      const id = await receive(channel);
      await createWorker(app.ctx).runOnce();

      const stored = await event(id);
      expect(stored).toMatchObject({
        status: 'replied',
        reply: 'Order 7 is confirmed.',
        provider: 'claude',
        model: 'claude-fake',
      });
      expect(stored.calls.map((c) => [c.provider, c.status, c.http_status])).toEqual([
        ['default', 'error', 529],
        ['claude', 'ok', 200],
      ]);
      expect(claude.requests[0]?.headers['x-api-key']).toBe(claude.apiKey);
      await driver.api('delete', `/channels/${channel.id}`).expect(204);
      await driver.api('delete', `/providers/${added.body.id}`).expect(204);
    } finally {
      await claude.close();
    }
  });
});

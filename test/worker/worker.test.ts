import { afterEach, describe, expect, it } from 'vitest';
import { createAiProvider } from '../../src/ai/create-provider.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { READY_LEASE_MS } from '../../src/worker/worker.js';
import { claimEvents } from '../../src/worker/queue-claim.js';
import { finishEvents } from '../../src/worker/queue-finish.js';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { fakeReplyTo } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const AI_KEY = 'sk-worker-test-key-31337';

interface EventState {
  id: string;
  status: string;
  payload: string;
  prompt: string | null;
  reply: string | null;
  error: string | null;
  attempts: number;
  locked_by: string | null;
  locked_until: Date | null;
  completed_at: Date | null;
  /** run_at − now() on the database clock, in seconds. */
  due_in: number;
}

const { app, driver, ai } = useTestApp({
  ai: true,
  env: {
    AI_API_KEY: AI_KEY,
    AI_MAX_ATTEMPTS: '3',
    // Retries are due at once unless a test says otherwise, so runOnce() can drive them.
    WORKER_RETRY_BASE_MS: '0',
  },
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
});

async function eventState(id: string): Promise<EventState> {
  const { rows } = await app.ctx.db.query<EventState>(
    `select id, status, payload, prompt, reply, error, attempts, locked_by, locked_until, completed_at,
       extract(epoch from run_at - now())::float8 as due_in
     from events where id = $1`,
    [id],
  );
  return rows[0] as EventState;
}

async function receive(
  channel: ChannelJson,
  body: unknown = { order: { id: 42 } },
): Promise<string> {
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

describe('worker', () => {
  it('renders the prompt, asks the AI and stores the reply', async () => {
    const channel = await driver.createChannel({ template: 'Order {{order.id}} arrived' });
    const id = await receive(channel);
    expect((await eventState(id)).status).toBe('pending');

    expect(await createWorker(app.ctx).runOnce()).toBe(1);

    const event = await eventState(id);
    expect(event).toMatchObject({
      status: 'replied',
      prompt: 'Order 42 arrived',
      reply: fakeReplyTo('Order 42 arrived'),
      error: null,
      attempts: 1,
      locked_by: null,
      locked_until: null,
    });
    expect(event.completed_at).toBeInstanceOf(Date);
    expect(ai.prompts()).toEqual(['Order 42 arrived']);
  });

  it('uses the template as it is when the event is processed', async () => {
    const channel = await driver.createChannel({ template: 'old {{order.id}}' });
    const id = await receive(channel);
    await driver.updateChannel(channel.id, { template: 'new {{order.id}}' }).expect(200);
    await createWorker(app.ctx).runOnce();
    expect((await eventState(id)).prompt).toBe('new 42');
  });

  it('retries a 500 and ends replied with two attempts', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    ai.enqueue({ status: 500 });
    const worker = createWorker(app.ctx);

    await worker.runOnce();
    const waiting = await eventState(id);
    expect(waiting).toMatchObject({
      status: 'pending',
      attempts: 1,
      prompt: 'Order 42',
      locked_by: null,
      reply: null,
    });
    expect(waiting.error).toBe('The AI server failed (HTTP 500): fake failure 500');

    await worker.runOnce();
    expect(await eventState(id)).toMatchObject({
      status: 'replied',
      attempts: 2,
      error: null,
      reply: fakeReplyTo('Order 42'),
    });
    expect(ai.requests).toHaveLength(2);
  });

  it('backs off exponentially, with jitter, before a retry', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    ai.defaultReply = { status: 503 };
    const worker = createWorker(app.ctx, { retryBaseMs: 10_000, maxAttempts: 5 });

    await worker.runOnce();
    const first = await eventState(id);
    expect(first.status).toBe('pending');
    // 10 s × 2⁰, of which up to half is dropped at random
    expect(first.due_in).toBeGreaterThan(4.9);
    expect(first.due_in).toBeLessThanOrEqual(10);
    expect(await worker.runOnce()).toBe(0);

    // Instead of waiting out the backoff, the test makes the event due.
    await app.ctx.db.query('update events set run_at = now() where id = $1', [id]);
    await worker.runOnce();
    const second = await eventState(id);
    expect(second.attempts).toBe(2);
    expect(second.due_in).toBeGreaterThan(9.9);
    expect(second.due_in).toBeLessThanOrEqual(20);
  });

  it('fails a call that never answers after AI_MAX_ATTEMPTS timeouts, keeping the error', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    ai.defaultReply = { hang: true };
    const worker = createWorker(app.ctx, {
      provider: createAiProvider({ ...app.ctx.config.ai, timeoutMs: 50 }),
    });

    for (let i = 0; i < 3; i++) expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(0);

    const event = await eventState(id);
    expect(event).toMatchObject({
      status: 'failed',
      attempts: 3,
      reply: null,
      error: 'The AI server did not answer within 50 ms. Gave up after 3 attempts.',
    });
    expect(event.completed_at).toBeInstanceOf(Date);
    expect(ai.requests).toHaveLength(3);
  });

  it('does not retry a 401, and never shows the API key in the error or the log', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    ai.enqueue({
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${AI_KEY}` } },
    });

    await createWorker(app.ctx).runOnce();

    const event = await eventState(id);
    expect(event).toMatchObject({ status: 'failed', attempts: 1 });
    expect(event.error).toBe(
      'The AI server refused the request (HTTP 401): Incorrect API key provided: [redacted]',
    );
    expect(ai.requests[0]?.headers.authorization).toBe(`Bearer ${AI_KEY}`);
    expect(app.logText()).toContain('event failed');
    expect(app.logText()).not.toContain(AI_KEY);
  });

  it('skips an empty prompt without calling the AI, keeping the payload', async () => {
    const cases = [
      { template: '', body: { a: 1 } },
      { template: '{{missing.field}}', body: { order: { id: 7 } } },
      { template: '  {{ absent }}\n\t', body: { present: 'yes' } },
    ];
    const ids: string[] = [];
    for (const { template, body } of cases)
      ids.push(await receive(await driver.createChannel({ template }), body));

    expect(await createWorker(app.ctx).runOnce()).toBe(3);

    for (const [i, id] of ids.entries()) {
      const event = await eventState(id);
      expect(event).toMatchObject({ status: 'skipped', attempts: 0, reply: null, error: null });
      expect(event.payload).toBe(JSON.stringify(cases[i]?.body));
      expect(event.completed_at).toBeInstanceOf(Date);
    }
    expect(ai.requests).toHaveLength(0);
  });

  it('answers a payload holding \\u0000, storing U+FFFD in the prompt', async () => {
    const channel = await driver.createChannel({ template: 'A: {{a}}' });
    const raw = '{"a":"x\\u0000y"}';
    const id = await receive(channel, raw);

    await createWorker(app.ctx).runOnce();

    const event = await eventState(id);
    expect(event).toMatchObject({ status: 'replied', payload: raw, prompt: 'A: x\uFFFDy' });
    expect(event.reply).toBe(fakeReplyTo('A: x\uFFFDy'));
  });

  it('fails an event whose stored payload is not JSON, without an AI call', async () => {
    const channel = await driver.createChannel();
    const { rows } = await app.ctx.db.query<{ id: string }>(
      `insert into events (workspace_id, channel_id, payload) values ($1, $2, 'not json') returning id`,
      [app.ctx.defaultWorkspaceId, channel.id],
    );
    const id = rows[0]?.id as string;

    await createWorker(app.ctx).runOnce();

    const event = await eventState(id);
    expect(event).toMatchObject({ status: 'failed', attempts: 0 });
    expect(event.error).toMatch(/^The stored payload is not valid JSON: /);
    expect(ai.requests).toHaveLength(0);
  });
});

describe('queue leases', () => {
  it('takes an event again once the lease of a worker that stopped answering ends, and ignores that worker after', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    // A worker claims the event and then goes silent (as if its process hung or died).
    const [held] = await claimEvents(app.ctx.db, 'silent-worker', 10, 60_000);
    expect(held?.id).toBe(id);

    const worker = createWorker(app.ctx);
    expect(await worker.runOnce()).toBe(0);

    // The lease runs out (the test moves it into the past instead of waiting a minute).
    await app.ctx.db.query(
      `update events set run_at = now() - interval '1 second', locked_until = now() - interval '1 second' where id = $1`,
      [id],
    );
    expect(await worker.runOnce()).toBe(1);
    expect(await eventState(id)).toMatchObject({ status: 'replied', attempts: 1 });

    // The silent worker wakes up: its late result must not overwrite the stored reply.
    expect(
      await finishEvents(app.ctx.db, 'silent-worker', [
        { eventId: id, outcome: { status: 'failed', error: 'late' } },
      ]),
    ).toEqual(new Set());
    expect(await eventState(id)).toMatchObject({
      status: 'replied',
      error: null,
      reply: fakeReplyTo('Order 42'),
    });
  });

  it('fails an event whose last allowed attempt was cut short, without another call', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    await app.ctx.db.query(
      `update events set status = 'processing', attempts = 3, locked_by = 'dead-worker',
         error = 'The AI server failed (HTTP 502): bad gateway', run_at = now() - interval '1 second',
         locked_until = now() - interval '1 second'
       where id = $1`,
      [id],
    );

    await createWorker(app.ctx).runOnce();

    expect(await eventState(id)).toMatchObject({
      status: 'failed',
      attempts: 3,
      error: 'The AI server failed (HTTP 502): bad gateway',
    });
    expect(ai.requests).toHaveLength(0);
  });
});

describe('running worker', () => {
  /** finishEvents' statement (src/worker/queue-finish.ts), told apart by its text. */
  const isFinishStatement = (text: string) => text.includes('as finished(id, status');

  it("starts the next event's AI call while the previous one's reply is still being stored", async () => {
    const channel = await driver.createChannel();
    const first = await receive(channel, { order: { id: 1 } });
    const second = await receive(channel, { order: { id: 2 } });
    // Every finish statement waits until the test opens the gate.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const db = app.ctx.db;
    const gated = new Proxy(db, {
      get(target, property) {
        if (property === 'query')
          return async (...args: Parameters<typeof db.query>) => {
            if (isFinishStatement(args[0])) await gate;
            return db.query(...args);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const worker = createWorker(app.ctx, { db: gated, concurrency: 1, pollIntervalMs: 600_000 });
    await worker.start();
    try {
      // One slot: the second call can only start once the first call's slot is given up.
      await ai.waitForRequests(2);
      expect((await eventState(first)).status).toBe('processing');
    } finally {
      open();
      await worker.stop();
    }
    expect(await eventState(first)).toMatchObject({ status: 'replied', attempts: 1 });
    expect(await eventState(second)).toMatchObject({ status: 'replied', attempts: 1 });
  });

  it('is woken by a notification when an event arrives, not by its poll', async () => {
    const worker = createWorker(app.ctx, { pollIntervalMs: 600_000 });
    await worker.start();
    try {
      const channel = await driver.createChannel();
      await receive(channel);
      await ai.waitForRequests(1);
    } finally {
      await worker.stop();
    }
    expect(ai.prompts()).toEqual(['Order 42']);
  });

  it('holds an event claimed ahead under a short lease until its call starts, and gives it back on stop', async () => {
    const channel = await driver.createChannel();
    for (let n = 1; n <= 3; n++) await receive(channel, { order: { id: n } });
    ai.defaultReply = { hang: true };
    const worker = createWorker(app.ctx, {
      concurrency: 1,
      leaseMs: 60_000,
      shutdownGraceMs: 0,
      pollIntervalMs: 600_000,
    });
    await worker.start();
    try {
      await ai.waitForRequests(1);
      const held = await eventually(
        async () => {
          const { rows } = await app.ctx.db.query<{ attempts: number; lease_s: number }>(
            `select attempts, extract(epoch from locked_until - now())::float8 as lease_s
             from events where status = 'processing' order by attempts desc`,
          );
          return rows.length === 2 ? rows : undefined;
        },
        { what: 'an event claimed ahead' },
      );
      // The event in its call holds the full lease; the one waiting for the slot a short one.
      expect(held[0]?.attempts).toBe(1);
      expect(held[0]?.lease_s).toBeGreaterThan(50);
      expect(held[1]?.attempts).toBe(0);
      expect(held[1]?.lease_s).toBeLessThanOrEqual(READY_LEASE_MS / 1000);
    } finally {
      await worker.stop();
    }
    const { rows } = await app.ctx.db.query<{ attempts: number }>(
      `select attempts from events where status = 'pending' and locked_by is null order by id`,
    );
    expect(rows.map((row) => row.attempts)).toEqual([1, 0, 0]);
    expect(ai.requests).toHaveLength(1);
  });

  it('finishes in-flight events on stop within the grace period', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    ai.enqueue({ delayMs: 100 });
    const worker = createWorker(app.ctx, { shutdownGraceMs: 10_000 });
    await worker.start();
    await ai.waitForRequests(1);
    await worker.stop();
    expect(await eventState(id)).toMatchObject({ status: 'replied', attempts: 1 });
  });

  it('gives unanswered events back to the queue when the grace period is over', async () => {
    const channel = await driver.createChannel();
    const id = await receive(channel);
    ai.enqueue({ hang: true });
    const worker = createWorker(app.ctx, { shutdownGraceMs: 0 });
    await worker.start();
    await ai.waitForRequests(1);
    await worker.stop();

    const released = await eventState(id);
    expect(released).toMatchObject({
      status: 'pending',
      attempts: 1,
      prompt: 'Order 42',
      locked_by: null,
      locked_until: null,
    });
    expect(released.due_in).toBeLessThanOrEqual(0);

    expect(await createWorker(app.ctx).runOnce()).toBe(1);
    expect(await eventState(id)).toMatchObject({ status: 'replied', attempts: 2 });
  });
});

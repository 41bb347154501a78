import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAiProvider } from '../../src/ai/create-provider.js';
import { createWorker } from '../../src/worker/create-worker.js';
import type { Worker } from '../../src/worker/worker.js';
import type { ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { fakeReplyTo, type FakeReply } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

// The model misbehaves in every way a real one can; events must end `failed` with a readable
// error after AI_MAX_ATTEMPTS, never leak the key, and never hold up other channels' events.
const AI_KEY = `sk-faults-${randomBytes(16).toString('hex')}`;
const MAX_ATTEMPTS = 3;
const TIMEOUT_MS = 150;
const EVENTS_PER_FAULT = 3;

const { app, driver, ai } = useTestApp({
  ai: true,
  env: {
    AI_API_KEY: AI_KEY,
    AI_TIMEOUT_MS: String(TIMEOUT_MS),
    AI_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    // Retries are due at once, so runOnce() drives them without waiting out a backoff.
    WORKER_RETRY_BASE_MS: '0',
    WORKER_CONCURRENCY: '4',
  },
});

afterEach(async () => {
  await app.ctx.db.query('delete from events');
});

interface EventRow {
  id: string;
  channel_id: string;
  status: string;
  reply: string | null;
  error: string | null;
  attempts: number;
}

async function eventsOf(channel: ChannelJson): Promise<EventRow[]> {
  const { rows } = await app.ctx.db.query<EventRow>(
    `select id, channel_id, status, reply, error, attempts from events where channel_id = $1 order by id`,
    [channel.id],
  );
  return rows;
}

async function receive(channel: ChannelJson, count: number): Promise<void> {
  for (let n = 1; n <= count; n++) {
    expect((await driver.sendEvent(channel.webhook_url, { n })).status).toBe(200);
  }
}

/** Runs the worker until nothing is due; says how many claims it made. */
async function drain(worker: Worker): Promise<number> {
  let claims = 0;
  for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce()) claims += n;
  return claims;
}

/** A loopback address nothing listens on: connecting is refused at once. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

/** Some proxies echo the request headers back: the key then comes back inside the answer. */
const echoedAuth = (request: { headers: Record<string, unknown> }) =>
  String(request.headers.authorization);

interface Fault {
  name: string;
  /** The fake model's answer to every call (unused when the server is down). */
  reply?: (request: { headers: Record<string, unknown> }) => FakeReply;
  /** Point the worker at a port where nothing listens. */
  down?: boolean;
  /** The error an admin reads in Brain Logs, `{port}` standing for the refused port. */
  error: string;
}

const FAULTS: Fault[] = [
  {
    name: 'slow: answers only after AI_TIMEOUT_MS',
    reply: () => ({ delayMs: 60_000 }),
    error: `The AI server did not answer within ${TIMEOUT_MS} ms. Gave up after ${MAX_ATTEMPTS} attempts.`,
  },
  {
    name: 'down: connection refused',
    down: true,
    error: `Could not reach the AI server at 127.0.0.1:{port}: ECONNREFUSED. Gave up after ${MAX_ATTEMPTS} attempts.`,
  },
  {
    name: 'garbage: a 200 that is not JSON',
    reply: (request) => ({
      status: 200,
      body: `upstream says hi; you sent ${echoedAuth(request)}`,
    }),
    error: `The AI server sent an answer without a reply in it: upstream says hi; you sent Bearer [redacted] Gave up after ${MAX_ATTEMPTS} attempts.`,
  },
  {
    name: 'garbage: JSON without choices',
    reply: (request) => ({
      status: 200,
      body: { id: 'x', object: 'chat.completion', echo: echoedAuth(request) },
    }),
    error: `The AI server sent an answer without a reply in it: {"id":"x","object":"chat.completion","echo":"Bearer [redacted]"} Gave up after ${MAX_ATTEMPTS} attempts.`,
  },
  {
    name: 'garbage: an HTML 502 from a proxy',
    reply: (request) => ({
      status: 502,
      body: `<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<h1>Bad Gateway</h1><!-- ${echoedAuth(request)} -->\n</body>\n</html>`,
    }),
    error: `The AI server failed (HTTP 502): <html> <head><title>502 Bad Gateway</title></head> <body> <h1>Bad Gateway</h1><!-- Bearer [redacted] --> </body> </html> Gave up after ${MAX_ATTEMPTS} attempts.`,
  },
];

describe('AI faults', () => {
  const figures: string[] = [];
  afterAll(() => {
    console.log(`AI faults (AI_MAX_ATTEMPTS=${MAX_ATTEMPTS}):\n${figures.join('\n')}`);
  });

  it.each(FAULTS)(
    '$name: events end failed with a readable error after the retries, without the key',
    async (fault) => {
      const channel = await driver.createChannel({ name: fault.name, template: 'Event {{n}}' });
      await receive(channel, EVENTS_PER_FAULT);
      const downUrl = fault.down ? await closedPortUrl() : undefined;
      if (fault.reply) ai.defaultReply = fault.reply;
      const worker = createWorker(
        app.ctx,
        downUrl ? { provider: createAiProvider({ ...app.ctx.config.ai, baseUrl: downUrl }) } : {},
      );

      const claims = await drain(worker);

      const expected = fault.error.replace('{port}', downUrl ? new URL(downUrl).port : '');
      const events = await eventsOf(channel);
      expect(events).toHaveLength(EVENTS_PER_FAULT);
      for (const event of events) {
        expect(event).toMatchObject({
          status: 'failed',
          attempts: MAX_ATTEMPTS,
          reply: null,
          error: expected,
        });
      }
      expect(claims).toBe(EVENTS_PER_FAULT * MAX_ATTEMPTS);
      expect(ai.requests).toHaveLength(fault.down ? 0 : EVENTS_PER_FAULT * MAX_ATTEMPTS);
      for (const request of ai.requests)
        expect(request.headers.authorization).toBe(`Bearer ${AI_KEY}`);

      // What an admin sees through the API is the same readable error.
      const shown = await driver.api('get', `/events/${events[0]?.id}`).expect(200);
      expect(shown.body).toMatchObject({
        status: 'failed',
        error: expected,
        attempts: MAX_ATTEMPTS,
      });
      expect(JSON.stringify(shown.body)).not.toContain(AI_KEY);
      expect(app.logText()).not.toContain(AI_KEY);

      const failed = events.filter((e) => e.status === 'failed').length;
      figures.push(
        `  ${fault.name}: sent ${EVENTS_PER_FAULT}, replied 0, failed ${failed}, attempts ${events.reduce((sum, e) => sum + e.attempts, 0)} (AI requests seen ${ai.requests.length})`,
      );
    },
  );

  it('never shows a key that the server quotes at the edge of its answer, where the text is cut short', async () => {
    const channel = await driver.createChannel({ template: 'Event {{n}}' });
    await receive(channel, 1);
    // The message is shortened to 300 characters; the key starts just before the cut.
    ai.defaultReply = { status: 503, body: { error: { message: `${'x'.repeat(280)} ${AI_KEY}` } } };
    ai.enqueue({ status: 200, body: `${'y'.repeat(280)} ${AI_KEY}` });

    await drain(createWorker(app.ctx));

    const [event] = await eventsOf(channel);
    expect(event).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS });
    // Not even the start of the key is kept.
    expect(event?.error).not.toContain(AI_KEY.slice(0, 12));
    expect(app.logText()).not.toContain(AI_KEY.slice(0, 12));
  });

  it('recovers when the model comes back before the last attempt', async () => {
    const channel = await driver.createChannel({ template: 'Event {{n}}' });
    await receive(channel, 1);
    ai.enqueue(
      { status: 502, body: '<html>Bad Gateway</html>' },
      { status: 200, body: 'not json' },
    );

    await drain(createWorker(app.ctx));

    const [event] = await eventsOf(channel);
    expect(event).toMatchObject({
      status: 'replied',
      attempts: 3,
      reply: fakeReplyTo('Event 1'),
      error: null,
    });
  });
});

describe('one channel whose prompts hang the model', () => {
  it("does not hold up another channel's events: they are replied while the first channel's are still being retried", async () => {
    const slow = await driver.createChannel({ name: 'Hangs', template: 'A {{n}}' });
    const fast = await driver.createChannel({ name: 'Answers', template: 'B {{n}}' });
    const HANGING = 2;
    const ANSWERED = 20;
    // The hanging channel's events arrive first, so they are the first to be claimed.
    await receive(slow, HANGING);
    await receive(fast, ANSWERED);
    ai.defaultReply = (request) => (request.prompt?.startsWith('A ') ? { hang: true } : {});

    // Room for both hanging calls plus one more; a long AI timeout, so the hanging calls stay
    // open while the other channel's events go through; a failed call waits a minute to retry.
    const worker = createWorker(app.ctx, {
      concurrency: HANGING + 1,
      provider: createAiProvider({ ...app.ctx.config.ai, timeoutMs: 2000 }),
      retryBaseMs: 60_000,
      pollIntervalMs: 600_000,
      shutdownGraceMs: 30_000,
    });
    await worker.start();
    await ai.waitForRequests(HANGING + ANSWERED);
    // Every answered channel's call has been made while the hanging calls are still open, and
    // its results are stored moments later (a slot is free once its call ends; results are
    // written behind it, one statement at a time), long before the hanging calls time out.
    await eventually(async () => (await eventsOf(fast)).every((e) => e.status === 'replied'), {
      timeoutMs: 1000,
      what: "the answered channel's events to be stored as replied",
    });
    expect((await eventsOf(slow)).every((e) => e.status !== 'replied')).toBe(true);
    // Stopping lets the hanging calls end: they time out.
    await worker.stop();

    const answered = await eventsOf(fast);
    expect(answered.map((e) => [e.status, e.attempts])).toEqual(
      Array(ANSWERED).fill(['replied', 1]),
    );
    const hanging = await eventsOf(slow);
    expect(hanging.map((e) => [e.status, e.attempts, e.error])).toEqual(
      Array(HANGING).fill(['pending', 1, 'The AI server did not answer within 2000 ms.']),
    );

    // Their retries come due (the test moves them instead of waiting a minute) and keep hanging.
    const retryWorker = createWorker(app.ctx, {
      provider: createAiProvider({ ...app.ctx.config.ai, timeoutMs: 100 }),
    });
    for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
      await app.ctx.db.query('update events set run_at = now() where channel_id = $1', [slow.id]);
      expect(await retryWorker.runOnce()).toBe(HANGING);
    }
    const final = await eventsOf(slow);
    expect(final.map((e) => [e.status, e.attempts, e.error])).toEqual(
      Array(HANGING).fill([
        'failed',
        MAX_ATTEMPTS,
        `The AI server did not answer within 100 ms. Gave up after ${MAX_ATTEMPTS} attempts.`,
      ]),
    );
    console.log(
      `AI hangs for one channel: sent ${HANGING + ANSWERED}, other channel replied ${answered.length} of ${ANSWERED} while the hanging ones were retried, hanging ones failed ${final.length} after ${MAX_ATTEMPTS} attempts each (AI requests ${ai.requests.length})`,
    );
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { fakeReplyTo, type RecordedRequest } from '../support/fake-ai-server.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';

const { app, driver, ai } = useTestApp({ ai: true, env: { WORKER_CONCURRENCY: '8' } });

afterEach(async () => {
  await app.ctx.db.query('delete from events');
});

async function threadChannel(history = 0): Promise<ChannelJson> {
  const res = await driver.api('post', '/channels').send({
    name: 'Support',
    template: '{{text}}',
    ai: { thread_key: '{{ customer.id }}', history },
  });
  expect(res.status).toBe(201);
  return res.body as ChannelJson;
}

async function send(channel: ChannelJson, customer: number | null, text: string): Promise<string> {
  const body = customer === null ? { text } : { customer: { id: customer }, text };
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status).toBe(200);
  return res.body.event_id as string;
}

async function unfinished(): Promise<number> {
  const { rows } = await app.ctx.db.query<{ n: number }>(
    `select count(*)::int as n from events where status in ('pending', 'processing')`,
  );
  return rows[0]?.n ?? 0;
}

const request = (prompt: string): RecordedRequest => {
  const found = ai.requests.find((r) => r.prompt === prompt);
  if (!found) throw new Error(`no request for ${prompt}`);
  return found;
};

describe('threads', () => {
  it('stores the rendered thread key, and none when it renders empty', async () => {
    const channel = await threadChannel();
    const inThread = await send(channel, 7, 'hello');
    const alone = await send(channel, null, 'no customer');
    expect((await driver.api('get', `/events/${inThread}`)).body.thread_key).toBe('7');
    expect((await driver.api('get', `/events/${alone}`)).body.thread_key).toBeNull();
  });

  it('claims one event per thread at a time, while other threads and unthreaded events go ahead', async () => {
    const channel = await threadChannel();
    for (const text of ['a1', 'a2', 'a3']) await send(channel, 1, text);
    await send(channel, 2, 'b1');
    await send(channel, null, 'free');
    const worker = createWorker(app.ctx);
    expect(await worker.runOnce()).toBe(3);
    expect(ai.prompts().sort()).toEqual(['a1', 'b1', 'free']);
    expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(1);
    expect(ai.prompts()).toEqual(expect.arrayContaining(['a2', 'a3']));
    expect(ai.prompts().indexOf('a2')).toBeLessThan(ai.prompts().indexOf('a3'));
  });

  it('sends the last `history` replied events of the thread as pairs, oldest first', async () => {
    const channel = await threadChannel(2);
    for (const text of ['m1', 'm2', 'm3', 'm4']) await send(channel, 7, text);
    await send(channel, 8, 'other');
    const worker = createWorker(app.ctx);
    while ((await unfinished()) > 0) await worker.runOnce();

    expect((request('m1').body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'm1' },
    ]);
    expect((request('m4').body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'm2' },
      { role: 'assistant', content: fakeReplyTo('m2') },
      { role: 'user', content: 'm3' },
      { role: 'assistant', content: fakeReplyTo('m3') },
      { role: 'user', content: 'm4' },
    ]);
    expect((request('other').body as { messages: unknown[] }).messages).toHaveLength(1);
  });

  it('leaves failed events of the thread out of the history', async () => {
    const channel = await threadChannel(5);
    await send(channel, 7, 'ok');
    await send(channel, 7, 'refused');
    await send(channel, 7, 'last');
    ai.enqueue({}, { status: 400 });
    const worker = createWorker(app.ctx);
    while ((await unfinished()) > 0) await worker.runOnce();
    expect((request('last').body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'ok' },
      { role: 'assistant', content: fakeReplyTo('ok') },
      { role: 'user', content: 'last' },
    ]);
  });
});

describe.skipIf(!testDatabaseUrl)(
  'threads with two workers on separate connections (PostgreSQL)',
  () => {
    const second = useFixture<Database>(
      async () => openPostgres({ url: app.database.url as string, max: 10 }),
      { stop: (db) => db.close() },
    );

    it('never has two events of one thread in flight at once, while another thread proceeds', async () => {
      const channel = await threadChannel();
      for (let i = 1; i <= 6; i++) await send(channel, 1, `a${i}`);
      for (let i = 1; i <= 3; i++) await send(channel, 2, `b${i}`);
      ai.defaultReply = { delayMs: 50 };
      const first = createWorker(app.ctx);
      const other = createWorker(app.ctx, { db: second });
      while ((await unfinished()) > 0) await Promise.all([first.runOnce(), other.runOnce()]);

      const spans = (thread: string) =>
        ai.requests
          .filter((r) => r.prompt?.startsWith(thread))
          .map((r) => ({ prompt: r.prompt, from: r.receivedAt, to: r.answeredAt ?? Infinity }));
      for (const thread of ['a', 'b']) {
        const calls = spans(thread);
        expect(calls.map((c) => c.prompt)).toEqual(calls.map((_, i) => `${thread}${i + 1}`));
        for (let i = 1; i < calls.length; i++) {
          expect(calls[i]?.from).toBeGreaterThanOrEqual(calls[i - 1]?.to ?? Infinity);
        }
      }
      // The other thread was not held back: b1 was asked while a1 was in flight.
      const a1 = spans('a')[0];
      const b1 = spans('b')[0];
      expect(b1?.from).toBeLessThan(a1?.to ?? 0);
    });
  },
);

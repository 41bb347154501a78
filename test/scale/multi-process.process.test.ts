import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeAiServer, fakeReplyTo } from '../support/fake-ai-server.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

const redisUrl = process.env.TEST_REDIS_URL || undefined;
const ADMIN_API_KEY = 'scale-test-admin-key-0123456789';
const PER_CHANNEL = 100;
const QUOTA = 100;

interface Answer {
  status: number;
  code?: string;
  eventId?: string;
  prompt: string;
}

describe.skipIf(!testDatabaseUrl || !redisUrl)(
  'two web processes and a worker on one PostgreSQL and one Redis (needs TEST_DATABASE_URL and TEST_REDIS_URL)',
  () => {
    let ai: FakeAiServer;
    let database: TestDatabase;
    let web: ServerProcess[] = [];
    let worker: ServerProcess | undefined;
    /** Every event a sender got a 200 for, over all the tests below. */
    const accepted: Answer[] = [];
    let nextOrderId = 0;

    beforeAll(async () => {
      ai = await FakeAiServer.start();
      database = await createTestDatabase();
      const shared = {
        DATABASE_URL: database.url as string,
        REDIS_URL: redisUrl as string,
        ADMIN_API_KEY,
        DEFAULT_CHAT_QUOTA: '1000000',
        RATE_LIMIT_PER_CHANNEL: String(PER_CHANNEL),
        // Every request comes from 127.0.0.1, and other test files count that address in the
        // same Redis: the per-sender limit is not what this file is about.
        RATE_LIMIT_PER_IP: '100000000',
      };
      [web[0], web[1], worker] = await Promise.all([
        startServerProcess({ ...shared, ROLE: 'web' }),
        startServerProcess({ ...shared, ROLE: 'web' }),
        startServerProcess({
          ...shared,
          ROLE: 'worker',
          ...ai.env(),
        }),
      ]);
    });

    afterAll(async () => {
      await Promise.all([...web, worker].map((process) => process?.stop('SIGKILL')));
      web = [];
      await ai?.close();
      await database?.drop();
    });

    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${web[0]?.baseUrl}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    /** A new channel's webhook path: the same URL works on every web process. */
    const createChannel = async (name: string) => {
      const res = await api('POST', '/channels', { name, template: 'Order {{order.id}}' });
      expect(res.status).toBe(201);
      return new URL(res.body.webhook_url as string).pathname;
    };

    /** POSTs one event with a fresh order id to `hookPath` on web process `n`. */
    const send = async (n: number, hookPath: string): Promise<Answer> => {
      const orderId = ++nextOrderId;
      const res = await fetch(`${web[n]?.baseUrl}${hookPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ order: { id: orderId } }),
      });
      const body = (await res.json()) as { code?: string; event_id?: string };
      const answer = {
        status: res.status,
        code: body.code,
        eventId: body.event_id,
        prompt: `Order ${orderId}`,
      };
      if (res.status === 200) accepted.push(answer);
      return answer;
    };

    const tally = (answers: Answer[]) => {
      const counts: Record<string, number> = {};
      for (const { status, code } of answers) {
        const key = code ? `${status} ${code}` : String(status);
        counts[key] = (counts[key] ?? 0) + 1;
      }
      return counts;
    };

    it(`holds the per-channel rate limit across both web processes (${PER_CHANNEL} per window)`, async () => {
      const hook = await createChannel('Rate limited');
      const answers = await Promise.all(
        Array.from({ length: PER_CHANNEL + 50 }, (_, i) => send(i % 2, hook)),
      );

      expect(tally(answers)).toEqual({ '200': PER_CHANNEL, '429 rate_limited': 50 });
      // both processes accepted some: the count is shared, not per process
      const acceptedBy = [0, 1].map((n) =>
        answers.filter((a, i) => i % 2 === n && a.status === 200),
      );
      expect(acceptedBy.every((list) => list.length > 0)).toBe(true);
      console.log(
        `rate limit: ${answers.length} requests over 2 web processes → ${JSON.stringify(tally(answers))} (accepted ${acceptedBy.map((l) => l.length).join(' + ')})`,
      );
    });

    it(`accepts exactly the chat quota (${QUOTA}) from many concurrent requests through both`, async () => {
      const reset = await api('PATCH', '/workspace', { chat_quota: QUOTA, chats_used: 0 });
      expect(reset.body).toMatchObject({ chat_quota: QUOTA, chats_used: 0 });
      // three channels, each sent exactly its rate limit, so only the quota can refuse
      const hooks: string[] = [];
      for (let i = 0; i < 3; i++) hooks.push(await createChannel(`Quota ${i}`));

      const answers = await Promise.all(
        Array.from({ length: 3 * PER_CHANNEL }, (_, i) => send(i % 2, hooks[i % 3] as string)),
      );

      expect(tally(answers)).toEqual({
        '200': QUOTA,
        '403 quota_exceeded': 3 * PER_CHANNEL - QUOTA,
      });
      const workspace = await api('GET', '/workspace');
      expect(workspace.body).toMatchObject({ chat_quota: QUOTA, chats_used: QUOTA });
      console.log(
        `quota: ${answers.length} concurrent requests over 2 web processes → ${JSON.stringify(tally(answers))}; chats_used ${String(workspace.body.chats_used)}`,
      );
    });

    it('has the worker process reply to every accepted event exactly once', async () => {
      expect(accepted).toHaveLength(PER_CHANNEL + QUOTA);
      // The worker is another process: wait (bounded) until it has nothing left to do.
      const deadline = Date.now() + 60_000;
      let unfinished = Infinity;
      while (unfinished > 0 && Date.now() < deadline) {
        const { rows } = await database.db.query<{ count: number }>(
          `select count(*)::integer as count from events where status in ('pending', 'processing')`,
        );
        unfinished = rows[0]?.count ?? 0;
        if (unfinished > 0) await delay(100);
      }
      expect(unfinished).toBe(0);

      const { rows } = await database.db.query<{
        id: string;
        status: string;
        reply: string | null;
        attempts: number;
      }>(`select id, status, reply, attempts from events where status <> 'rejected' order by id`);
      const expected = accepted
        .map((a) => ({
          id: a.eventId,
          status: 'replied',
          reply: fakeReplyTo(a.prompt),
          attempts: 1,
        }))
        .sort((a, b) => Number(a.id) - Number(b.id));
      expect(rows).toEqual(expected);
      // one AI call per accepted event, and each answered once
      expect(ai.requests).toHaveLength(accepted.length);
      expect(ai.prompts().sort()).toEqual(accepted.map((a) => a.prompt).sort());
      expect([...ai.answered.values()].every((times) => times === 1)).toBe(true);
      console.log(
        `worker: ${rows.length} accepted events, ${rows.filter((r) => r.status === 'replied').length} replied, ${ai.requests.length} AI calls`,
      );
    });

    it('stores exactly one of 50 concurrent requests with one webhook-id sent through both processes', async () => {
      const hook = await createChannel('Deduplicated');
      await api('PATCH', '/workspace', { chat_quota: 1_000_000 });
      const chatsBefore = (await api('GET', '/workspace')).body.chats_used as number;
      const aiBefore = ai.requests.length;
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const res = await fetch(`${web[i % 2]?.baseUrl}${hook}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'webhook-id': 'msg_one_of_fifty' },
            body: JSON.stringify({ order: { id: 'fifty' } }),
          });
          return { status: res.status, body: (await res.json()) as Record<string, unknown> };
        }),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
      const ids = new Set(answers.map((a) => a.body.event_id));
      expect(ids.size).toBe(1);
      expect(answers.filter((a) => a.body.duplicate === true)).toHaveLength(49);
      const eventId = [...ids][0] as string;
      const { rows } = await database.db.query<{ id: string; duplicates: number }>(
        `select e.id, e.duplicates from events e join channels c on c.id = e.channel_id
         where c.name = 'Deduplicated'`,
      );
      expect(rows).toEqual([{ id: eventId, duplicates: 49 }]);
      expect((await api('GET', '/workspace')).body.chats_used).toBe(chatsBefore + 1);

      // the worker process answers it once
      const deadline = Date.now() + 60_000;
      let status = 'pending';
      while (status !== 'replied' && Date.now() < deadline) {
        status = ((await api('GET', `/events/${eventId}`)).body.status as string) ?? status;
        if (status !== 'replied') await delay(100);
      }
      expect(status).toBe('replied');
      expect(ai.requests.length - aiBefore).toBe(1);
      console.log(
        `dedup: 50 concurrent requests over 2 web processes → 1 event (${rows[0]?.duplicates} duplicates), 1 chat, 1 AI call`,
      );
    });
  },
);

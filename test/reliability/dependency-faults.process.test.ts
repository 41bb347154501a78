import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ENV, PanelClient } from '../panel/panel-client.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import {
  canStartPostgres,
  startTempPostgres,
  type TempPostgres,
} from '../support/temp-postgres.js';
import type { TestApp } from '../support/test-app.js';
import { testDatabaseUrl } from '../support/test-database.js';

// The service as a real process, on a PostgreSQL of the test's own (so it can be paused with
// SIGSTOP) and behind a TCP proxy in front of Redis (so Redis can go silent for this process
// alone). Each row of the fault table: the bound on the answer, every 200 stored, no 503 stored
// later, and the process gone within SHUTDOWN_TIMEOUT_MS when asked to stop.
const redisUrl = process.env.TEST_REDIS_URL || undefined;
const ADMIN_API_KEY = 'dependency-faults-admin-key-0123456789';
const SHUTDOWN_TIMEOUT_MS = 4_000;
/** The contract's bound on a webhook's answer, whatever the dependencies do. */
const ANSWER_BOUND_MS = 10_000;
/** Slack for a loaded 2-core machine when checking an exit time. */
const SLACK_MS = 1_500;

let postgres: TempPostgres;
let server: ServerProcess | undefined;
const figures: string[] = [];

beforeAll(async () => {
  if (canStartPostgres && testDatabaseUrl) postgres = await startTempPostgres();
});
afterEach(async () => {
  postgres?.resume();
  await server?.stop('SIGKILL');
  server = undefined;
});
afterAll(() => {
  postgres?.destroy();
  if (figures.length) console.log(`dependency faults:\n  ${figures.join('\n  ')}`);
});

function startServer(env: Record<string, string> = {}) {
  return startServerProcess({
    DATABASE_URL: postgres.url,
    ADMIN_API_KEY,
    ...ADMIN_ENV,
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    RATE_LIMIT_PER_CHANNEL: '100000000',
    RATE_LIMIT_PER_IP: '100000000',
    ...env,
  });
}

async function createChannel(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/channels`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Faults', template: 'Order {{order.id}}' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { webhook_url: string }).webhook_url;
}

interface Answer {
  status: number;
  ms: number;
  marker: string;
  eventId?: string;
}

/** Posts `count` webhooks at once, each with a marker of its own to find it in the database. */
async function sendAtOnce(webhookUrl: string, count: number): Promise<Answer[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const marker = randomBytes(8).toString('hex');
      const started = performance.now();
      const res = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ order: { id: marker } }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await res.json()) as { event_id?: string };
      return {
        status: res.status,
        ms: performance.now() - started,
        marker,
        eventId: body.event_id,
      };
    }),
  );
}

async function storedMarkers(answers: Answer[]): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ payload: string }>(
      `select payload from events where payload ~ $1`,
      [answers.map((a) => a.marker).join('|') || 'none'],
    );
    return new Set(
      answers.filter((a) => rows.some((r) => r.payload.includes(a.marker))).map((a) => a.marker),
    );
  } finally {
    await client.end();
  }
}

/** Every 200 is stored; no 503 is stored, then or later. */
async function expectAnswersTrue(answers: Answer[]) {
  const stored = await storedMarkers(answers);
  for (const answer of answers) expect(stored.has(answer.marker)).toBe(answer.status === 200);
}

const slowest = (answers: Answer[]) => Math.round(Math.max(...answers.map((a) => a.ms)));
const statuses = (answers: Answer[]) => [...new Set(answers.map((a) => a.status))].sort();

/** Sends SIGTERM; resolves to the exit code and how long the process took to end. */
async function stopTimed(process: ServerProcess) {
  const started = performance.now();
  const code = await process.stop('SIGTERM');
  return { code, ms: Math.round(performance.now() - started) };
}

async function readyz(baseUrl: string) {
  const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!canStartPostgres || !testDatabaseUrl || !redisUrl)('Redis stops answering', () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    const target = new URL(redisUrl as string);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
  });
  afterAll(() => proxy.close());

  it('accepts TCP and never answers, from start-up on: starts, answers, signs in, says so; recovers; stops in time', async () => {
    proxy.setMode('swallow');
    server = await startServer({ REDIS_URL: proxy.url('redis') });
    const { baseUrl } = server;
    const webhookUrl = await createChannel(baseUrl);

    const silent = await sendAtOnce(webhookUrl, 5);
    expect(statuses(silent)).toEqual([200]);
    expect(slowest(silent)).toBeLessThan(ANSWER_BOUND_MS);
    await expectAnswersTrue(silent);
    const signIn = await new PanelClient({ baseUrl } as TestApp).signIn();
    expect(signIn.status).toBe(303);
    // `connecting` until the first connection has had its 2 s to answer, then `unavailable`.
    await until(async () => (await readyz(baseUrl)).body.redis === 'unavailable', 5_000);
    expect(await readyz(baseUrl)).toEqual({
      status: 200,
      body: { status: 'ready', database: 'ok', redis: 'unavailable' },
    });
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /hookprompt_rate_limit_fail_open_total\{limit="(sender|channel)"\} [1-9]/,
    );
    expect(server.output()).toContain('redis is not answering');
    figures.push(
      `Redis silent from start-up: process listening; 5 webhooks answered ${statuses(silent)} in ${slowest(silent)} ms at most, all stored; sign-in 303; /readyz 200 redis=unavailable`,
    );

    // Redis answers again: the connection is made anew, and the limits count in Redis again.
    proxy.setMode('pass');
    await until(async () => (await readyz(baseUrl)).body.redis === 'ok');

    // Paused while connected: commands get no answer.
    proxy.setMode('swallow');
    const paused = await sendAtOnce(webhookUrl, 5);
    expect(statuses(paused)).toEqual([200]);
    expect(slowest(paused)).toBeLessThan(ANSWER_BOUND_MS);
    await expectAnswersTrue(paused);
    figures.push(
      `Redis paused while connected: 5 webhooks answered ${statuses(paused)} in ${slowest(paused)} ms at most, all stored`,
    );

    const stop = await stopTimed(server);
    expect(stop.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
    figures.push(`SIGTERM while Redis is silent: exit ${stop.code} after ${stop.ms} ms`);
  });
});

/** An API request and a panel page, each timed, while the database may not answer. */
async function apiAndPanel(baseUrl: string, panel: PanelClient) {
  const started = performance.now();
  const [api, page] = await Promise.all([
    fetch(`${baseUrl}/api/v1/channels`, {
      headers: { authorization: `Bearer ${ADMIN_API_KEY}` },
      signal: AbortSignal.timeout(30_000),
    }).then(async (res) => ({
      status: res.status,
      type: res.headers.get('content-type'),
      code: ((await res.json()) as { code?: string }).code,
      ms: Math.round(performance.now() - started),
    })),
    panel
      .page('/channels')
      .timeout(30_000)
      .then((res) => ({ status: res.status, ms: Math.round(performance.now() - started) })),
  ]);
  return { api, page };
}

describe.skipIf(!canStartPostgres || !testDatabaseUrl)('PostgreSQL stops answering', () => {
  it('paused (SIGSTOP): webhooks, API and panel get 503 in time and no webhook is stored; /readyz 503; SIGTERM ends the process in time', async () => {
    server = await startServer();
    const { baseUrl } = server;
    const webhookUrl = await createChannel(baseUrl);
    const panel = new PanelClient({ baseUrl } as TestApp);
    expect((await panel.signIn()).status).toBe(303);
    const before = await sendAtOnce(webhookUrl, 3);
    expect(statuses(before)).toEqual([200]);

    await postgres.pause();
    const [during, { api, page }] = await Promise.all([
      sendAtOnce(webhookUrl, 6),
      apiAndPanel(baseUrl, panel),
    ]);
    expect(statuses(during)).toEqual([503]);
    expect(slowest(during)).toBeLessThan(ANSWER_BOUND_MS);
    expect(api).toMatchObject({
      status: 503,
      type: expect.stringContaining('application/problem+json'),
      code: 'service_unavailable',
    });
    expect(page.status).toBe(503);
    expect(Math.max(api.ms, page.ms)).toBeLessThan(ANSWER_BOUND_MS);
    const ready = await readyz(baseUrl);
    expect(ready).toMatchObject({ status: 503, body: { database: 'timeout' } });

    const stop = await stopTimed(server);
    expect(stop.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
    expect(stop.code).not.toBe(0);
    const output = server.output();
    expect(output).toContain('shutdown deadline passed');
    const waitingFor = /"waitingFor":\[([^\]]*)\]/.exec(output)?.[1];
    expect(waitingFor).toBeTruthy();

    // Back: whatever the paused server had been sent is rolled back, not committed.
    postgres.resume();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await expectAnswersTrue([...before, ...during]);
    figures.push(
      `PostgreSQL paused: 6 webhooks answered ${statuses(during)} in ${slowest(during)} ms at most, none stored after resuming; GET /api/v1/channels ${api.status} after ${api.ms} ms, panel /channels ${page.status} after ${page.ms} ms; /readyz ${ready.status} database=${ready.body.database}; SIGTERM: exit ${stop.code} after ${stop.ms} ms, waiting for ${waitingFor}`,
    );
  });

  it('the workspace row locked by another session: webhooks get 503 in time and are not stored after the lock goes', async () => {
    server = await startServer({ ROLE: 'web' });
    const webhookUrl = await createChannel(server.baseUrl);
    expect(statuses(await sendAtOnce(webhookUrl, 1))).toEqual([200]);

    const locker = new pg.Client({ connectionString: postgres.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('select * from workspaces for update');
    const during = await sendAtOnce(webhookUrl, 3);
    await locker.query('commit');
    await locker.end();

    expect(statuses(during)).toEqual([503]);
    expect(slowest(during)).toBeLessThan(ANSWER_BOUND_MS);
    const after = await sendAtOnce(webhookUrl, 2);
    expect(statuses(after)).toEqual([200]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await expectAnswersTrue([...during, ...after]);

    const stop = await stopTimed(server);
    expect(stop).toMatchObject({ code: 0 });
    expect(stop.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + SLACK_MS);
    figures.push(
      `workspace row locked: 3 webhooks answered ${statuses(during)} in ${slowest(during)} ms at most, none stored once the lock went; then 200 again; SIGTERM: exit ${stop.code} after ${stop.ms} ms`,
    );
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { useTestApp } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

const ADMIN_API_KEY = 'waiting-processes-admin-key-0123';
const processes: ServerProcess[] = [];
const databases: TestDatabase[] = [];

afterAll(async () => {
  await Promise.all(processes.map((process) => process.stop('SIGKILL')));
  await Promise.all(databases.map((database) => database.drop()));
});

/** The settings of a process on this run's database: its own PostgreSQL database, or PGlite on disk. */
async function databaseEnv(): Promise<Record<string, string>> {
  if (!testDatabaseUrl) return {};
  const database = await createTestDatabase();
  databases.push(database);
  return { DATABASE_URL: database.url as string };
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const started = await startServerProcess({ ADMIN_API_KEY, ...env });
  processes.push(started);
  return started;
}

async function createChannel(baseUrl: string): Promise<{ id: string; webhook_url: string }> {
  const res = await fetch(`${baseUrl}/api/v1/channels`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Orders', template: 'Order {{order.id}}' }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; webhook_url: string };
}

const postEvent = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ order: { id: 7 } }),
  }).then(async (res) => ({
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
  }));

async function storedEvents(baseUrl: string, channelId: string): Promise<unknown[]> {
  const res = await fetch(`${baseUrl}/api/v1/events?channel_id=${channelId}`, {
    headers: { authorization: `Bearer ${ADMIN_API_KEY}` },
  });
  return ((await res.json()) as { data: unknown[] }).data;
}

describe('a held answer at shutdown', () => {
  it('is cut short with received, and the process still stops', async () => {
    // No worker in this process: the event stays pending, so only shutdown ends the wait.
    const web = await start({ ...(await databaseEnv()), ROLE: 'web' });
    const channel = await createChannel(web.baseUrl);
    const answer = postEvent(`${channel.webhook_url}?wait=30`);
    await eventually(async () => (await storedEvents(web.baseUrl, channel.id)).length === 1, {
      what: 'the event to be stored',
    });
    const stoppedAt = Date.now();
    const exited = web.stop('SIGTERM');
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'received', event_id: expect.any(String) });
    expect(await exited).toBe(0);
    // Well before the 30 s the sender asked to wait: the held answer did not hold shutdown up.
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
  });
});

describe.skipIf(!testDatabaseUrl)(
  'a held answer released by a worker of another process (needs TEST_DATABASE_URL)',
  () => {
    // The web side runs in the test process; the worker that releases it is a process.
    const { app, driver } = useTestApp({ env: { ROLE: 'web' } });

    it('answers replied from ROLE=web when a ROLE=worker process finishes the event', async () => {
      const worker = await start({
        DATABASE_URL: app.database.url as string,
        SECRETS_KEY: app.database.secretsKey,
        ROLE: 'worker',
        WORKER_POLL_INTERVAL_MS: '60000',
      });
      expect(worker.baseUrl).not.toBe(app.baseUrl);
      const channel = await driver.createChannel({
        name: 'Orders',
        template: 'Order {{order.id}}',
      });
      const res = await postEvent(`${channel.webhook_url}?wait=10`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'replied',
        event_id: expect.any(String),
        reply: expect.stringContaining('You wrote: Order 7'),
      });
      const fetched = await fetch(`${channel.webhook_url}/events/${res.body.event_id as string}`);
      expect(await fetched.json()).toEqual(res.body);
    });
  },
);

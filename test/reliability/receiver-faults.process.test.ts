import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoad, summarise, type SentRequest } from '../support/load.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  canStartPostgres,
  startTempPostgres,
  type TempPostgres,
} from '../support/temp-postgres.js';
import {
  createTestDatabase,
  testDatabaseUrl,
  type TestDatabase,
} from '../support/test-database.js';

// These tests run the service as a real process on real PostgreSQL and break things under load.
const ADMIN_API_KEY = 'fault-test-admin-key-0123456789';
const UNLIMITED = { RATE_LIMIT_PER_CHANNEL: '100000000', RATE_LIMIT_PER_IP: '100000000' };

let server: ServerProcess | undefined;
let tempPostgres: TempPostgres | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await server?.stop('SIGKILL');
  tempPostgres?.destroy();
  await database?.drop();
  server = tempPostgres = database = undefined;
});

async function startWebProcessOnTestDatabase() {
  const database = await createTestDatabase();
  const server = await startServerProcess({
    DATABASE_URL: database.url as string,
    ADMIN_API_KEY,
    ROLE: 'web',
    ...UNLIMITED,
  });
  return { database, server };
}

/** Checks that every event a sender got a 200 for is stored, and prints the figures. */
async function expectEveryAcceptedEventStored(
  fault: string,
  databaseUrl: string,
  results: SentRequest[],
) {
  const { byStatus, acceptedIds, sent } = summarise(results);
  const stored = await storedIds(databaseUrl, acceptedIds);
  expect(acceptedIds.filter((id) => !stored.has(id))).toEqual([]);
  console.log(
    `${fault}: sent ${sent}, answered ${JSON.stringify(byStatus)}, stored ${stored.size} of ${acceptedIds.length} accepted`,
  );
  return byStatus;
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

async function storedIds(url: string, ids: string[]): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      'select id::text from events where id = any($1::bigint[])',
      [ids],
    );
    return new Set(rows.map((row) => row.id));
  } finally {
    await client.end();
  }
}

describe.skipIf(!canStartPostgres)('PostgreSQL stops while senders post', () => {
  it('answers 503 (never 200) while it is down, stays up, and accepts again once it is back', async () => {
    tempPostgres = await startTempPostgres();
    server = await startServerProcess({
      DATABASE_URL: tempPostgres.url,
      ADMIN_API_KEY,
      ROLE: 'web',
      ...UNLIMITED,
    });
    const webhookUrl = await createChannel(server.baseUrl);

    const load = startLoad(webhookUrl, 8);
    await load.waitFor(200);
    tempPostgres.stop();
    const answeredBeforeOutage = load.results.length;
    await load.waitFor(100);
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(503);
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    tempPostgres.start();
    // after the first 200 following the restart, every later request must be accepted
    while (!load.results.slice(answeredBeforeOutage + 100).some((r) => r.status === 200))
      await load.waitFor(10);
    const firstBack =
      answeredBeforeOutage +
      100 +
      load.results.slice(answeredBeforeOutage + 100).findIndex((r) => r.status === 200);
    await load.waitFor(200);
    const results = await load.stop();

    const byStatus = await expectEveryAcceptedEventStored(
      'PostgreSQL outage',
      tempPostgres.url,
      results,
    );
    expect(Object.keys(byStatus).sort()).toEqual(['200', '503']);
    expect(
      results
        .slice(answeredBeforeOutage + 8, answeredBeforeOutage + 100)
        .every((r) => r.status === 503),
    ).toBe(true);
    expect(results.slice(firstBack + 8).every((r) => r.status === 200)).toBe(true);
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
  });
});

describe.skipIf(!testDatabaseUrl)('the web process dies or is stopped under load', () => {
  it('SIGKILL: every event whose sender got a 200 is in the database', async () => {
    ({ database, server } = await startWebProcessOnTestDatabase());
    const load = startLoad(await createChannel(server.baseUrl), 32);
    await load.waitFor(500);
    server.child.kill('SIGKILL');
    await server.exited;
    const results = await load.stop();

    const byStatus = await expectEveryAcceptedEventStored(
      'SIGKILL under load',
      database.url as string,
      results,
    );
    expect(Object.keys(byStatus).sort()).toEqual(['200', 'network_error']);
  });

  it('SIGTERM: in-flight requests finish, the process exits 0, and no 200 is lost', async () => {
    ({ database, server } = await startWebProcessOnTestDatabase());
    const load = startLoad(await createChannel(server.baseUrl), 32);
    await load.waitFor(500);
    const stopping = performance.now();
    const exitCode = await server.stop('SIGTERM');
    const stopMs = performance.now() - stopping;
    const results = await load.stop();

    expect(exitCode).toBe(0);
    // Within SHUTDOWN_TIMEOUT_MS (10 s by default) on a busy machine too.
    expect(stopMs).toBeLessThan(10_000);
    console.log(`SIGTERM under load: exited after ${Math.round(stopMs)} ms`);
    const byStatus = await expectEveryAcceptedEventStored(
      'SIGTERM under load',
      database.url as string,
      results,
    );
    expect(Object.keys(byStatus).sort()).toEqual(['200', 'network_error']);
  });

  it('keeps memory bounded under oversized and deeply nested bodies', async () => {
    ({ database, server } = await startWebProcessOnTestDatabase());
    const webhookUrl = await createChannel(server.baseUrl);
    const rss = () =>
      Number(
        /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server?.child.pid}/status`, 'utf8'))?.[1],
      ) * 1024;
    const post = (body: string) =>
      fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

    const deep = `{"a":${'['.repeat(100_000)}}`;
    const huge = `{"a":"${'x'.repeat(8 * 1024 * 1024)}"}`;
    await post(deep);
    const before = rss();
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all([
        ...Array.from({ length: 10 }, () => post(deep)),
        ...Array.from({ length: 4 }, () => post(huge)),
      ]);
      expect(answers.map((res) => res.status).sort()).toEqual([
        ...Array(10).fill(400),
        ...Array(4).fill(413),
      ]);
    }
    const growth = rss() - before;
    console.log(
      `memory: RSS ${Math.round(before / 2 ** 20)} MiB before, grew ${Math.round(growth / 2 ** 20)} MiB over 70 hostile requests (280 MiB sent)`,
    );
    expect(growth).toBeLessThan(150 * 2 ** 20);
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
  });
});

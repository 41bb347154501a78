import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { Driver } from '../support/driver.js';
import { FakeAiServer } from '../support/fake-ai-server.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { testDatabaseUrl } from '../support/test-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EVENTS = 20;
const CHILD_CONCURRENCY = 5;
const LEASE_MS = 1500;

/** `node --import tsx src/main.ts` directly (not the tsx CLI, which would run it in a grandchild that SIGKILL misses). */
function startWorkerProcess(env: Record<string, string>): {
  child: ChildProcess;
  port: Promise<number>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ROLE: 'worker', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === 'hookprompt listening') resolve(entry.port as number);
    });
  });
  return { child, port };
}

describe.skipIf(!testDatabaseUrl)(
  'crash recovery (real PostgreSQL only: a second process cannot open an embedded PGlite)',
  () => {
    let ai: FakeAiServer;
    let app: TestApp;
    const aiEnv = () => ({
      ...ai.env(),
      AI_TIMEOUT_MS: '1000',
    });

    beforeAll(async () => {
      ai = await FakeAiServer.start();
      app = await startTestApp({ env: { ...aiEnv(), WORKER_LEASE_MS: String(LEASE_MS) } });
    });

    afterAll(async () => {
      await app.close();
      await ai.close();
    });

    it('a worker killed mid-call leaves its events to another worker, and each event is replied once', async () => {
      const channel = await new Driver(app).createChannel({ template: 'Event {{n}}' });
      await app.ctx.db.query(
        `insert into events (workspace_id, channel_id, payload)
       select $1, $2, '{"n":' || n || '}' from generate_series(1, $3::integer) n`,
        [app.ctx.defaultWorkspaceId, channel.id, EVENTS],
      );

      // The model keeps the child's calls waiting, so it is killed while holding its events.
      ai.defaultReply = { hang: true };
      const { child, port } = startWorkerProcess({
        ...aiEnv(),
        DATABASE_URL: app.database.url as string,
        // The app's secrets (webhook tokens among them) are sealed with its database's key.
        SECRETS_KEY: app.database.secretsKey,
        WORKER_LEASE_MS: String(LEASE_MS),
        WORKER_CONCURRENCY: String(CHILD_CONCURRENCY),
        LOG_LEVEL: 'info',
      });
      try {
        const base = `http://127.0.0.1:${await port}`;
        // A worker process serves health, readiness and metrics, and nothing else.
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
        expect((await fetch(`${base}/readyz`)).status).toBe(200);
        expect(await (await fetch(`${base}/metrics`)).text()).toContain('hookprompt_queue_depth');
        expect((await fetch(`${base}/api/v1/events`)).status).toBe(404);
        expect(
          (await fetch(`${base}/hooks/${'a'.repeat(32)}`, { method: 'POST', body: '{}' })).status,
        ).toBe(404);

        await ai.waitForRequests(CHILD_CONCURRENCY);
        child.kill('SIGKILL');
        await once(child, 'exit');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      // It held the events of its calls, and perhaps one claimed ahead, waiting for a slot.
      const { rows: held } = await app.ctx.db.query<{ attempts: number; count: number }>(
        `select attempts, count(*)::integer as count from events where status = 'processing'
         group by attempts order by attempts desc`,
      );
      expect(held[0]).toEqual({ attempts: 1, count: CHILD_CONCURRENCY });
      expect(held[1]?.attempts ?? 0).toBe(0);
      expect(held[1]?.count ?? 0).toBeLessThanOrEqual(Math.ceil(CHILD_CONCURRENCY / 8));

      // A second worker takes the pending events at once and the dead child's when their lease
      // ends (the one claimed ahead included: its lease was never renewed for a call).
      ai.defaultReply = {};
      const worker = createWorker(app.ctx, { pollIntervalMs: 100 });
      await worker.start();
      await ai.waitForRequests(CHILD_CONCURRENCY + EVENTS);
      await worker.stop();

      const { rows } = await app.ctx.db.query<{ status: string; attempts: number; count: string }>(
        `select status, attempts, count(*) from events group by status, attempts order by attempts`,
      );
      // The killed calls count as attempts: those events were asked twice and answered once.
      expect(rows).toEqual([
        { status: 'replied', attempts: 1, count: String(EVENTS - CHILD_CONCURRENCY) },
        { status: 'replied', attempts: 2, count: String(CHILD_CONCURRENCY) },
      ]);
      expect(ai.answered.size).toBe(EVENTS);
      expect([...ai.answered.values()].every((count) => count === 1)).toBe(true);
      expect(ai.requests).toHaveLength(CHILD_CONCURRENCY + EVENTS);
    });
  },
);

import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { createWorker } from '../../src/worker/create-worker.js';
import type { Worker } from '../../src/worker/worker.js';
import { fakeReplyTo } from '../support/fake-ai-server.js';
import { useFixture, useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';

const EVENTS = 500;

/** Runs the worker until it finds nothing left to claim; says how many events it handled. */
async function drain(worker: Worker): Promise<number> {
  let handled = 0;
  for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce()) handled += n;
  return handled;
}

describe.skipIf(!testDatabaseUrl)(
  'two workers on one database (real PostgreSQL only: PGlite serves one connection, so nothing races)',
  () => {
    const { app, driver, ai } = useTestApp({ ai: true, env: { WORKER_CONCURRENCY: '8' } });
    const secondPool = useFixture<Database>(
      async () => openPostgres({ url: app.database.url as string, max: 10 }),
      { stop: (db) => db.close() },
    );

    it(`answer ${EVENTS} events between them, none twice`, async () => {
      const channel = await driver.createChannel({ template: 'Event {{n}}' });
      await app.ctx.db.query(
        `insert into events (workspace_id, channel_id, payload)
       select $1, $2, '{"n":' || n || '}' from generate_series(1, $3::integer) n`,
        [app.ctx.defaultWorkspaceId, channel.id, EVENTS],
      );
      const first = createWorker(app.ctx);
      const second = createWorker(app.ctx, { db: secondPool });

      const [byFirst, bySecond] = await Promise.all([drain(first), drain(second)]);

      expect(byFirst + bySecond).toBe(EVENTS);
      expect(ai.requests).toHaveLength(EVENTS);
      expect(new Set(ai.prompts()).size).toBe(EVENTS);
      expect([...ai.answered.values()].every((count) => count === 1)).toBe(true);
      const { rows } = await app.ctx.db.query<{ status: string; attempts: number; count: string }>(
        `select status, attempts, count(*) from events group by status, attempts`,
      );
      expect(rows).toEqual([{ status: 'replied', attempts: 1, count: String(EVENTS) }]);
      const { rows: wrong } = await app.ctx.db.query(
        `select id from events where reply <> $1 || prompt or prompt <> 'Event ' || (payload::json->>'n')`,
        [fakeReplyTo('')],
      );
      expect(wrong).toEqual([]);
    });
  },
);

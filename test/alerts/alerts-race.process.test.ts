import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAlertsEvaluator } from '../../src/alerts/create-alerts-evaluator.js';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { Driver } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { ReplyReceiver } from '../support/reply-receiver.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { testDatabaseUrl } from '../support/test-database.js';

describe.skipIf(!testDatabaseUrl)(
  'alerts evaluated by several processes (real PostgreSQL only: PGlite serves one process)',
  () => {
    let app: TestApp;
    let driver: Driver;
    let receiver: ReplyReceiver;
    let secondPool: Database;

    beforeAll(async () => {
      receiver = await ReplyReceiver.start();
      app = await startTestApp({ env: { DELIVERY_ALLOW_PRIVATE: 'true' } });
      driver = new Driver(app);
      secondPool = openPostgres({ url: app.database.url as string, max: 10 });
      receiver.secrets = [(await driver.api('get', '/alerts/secret')).body.secret as string];
    });

    afterAll(async () => {
      await secondPool.close();
      await app.close();
      await receiver.close();
    });

    beforeEach(async () => {
      receiver.messages.length = 0;
      await app.ctx.db.query('delete from alerts');
      await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
    });

    async function budgetAlert() {
      const res = await driver.api('post', '/alerts').send({
        name: 'Budget half spent',
        condition: { type: 'budget', percent: 50 },
        notify: { kind: 'webhook', url: receiver.url('/alerts') },
      });
      expect(res.status).toBe(201);
      return res.body as { id: string };
    }

    const changes = async () =>
      (
        await app.ctx.db.query<{ state: string; notification: string; attempts: number }>(
          'select state, notification, attempts from alert_changes order by id',
        )
      ).rows;

    it('record and notify each change once when evaluations on two connections race', async () => {
      await budgetAlert();
      const first = createAlertsEvaluator(app.ctx);
      const second = createAlertsEvaluator(app.ctx, { db: secondPool });
      const race = async () => {
        for (let i = 0; i < 5; i++) await Promise.all([first.runOnce(), second.runOnce()]);
      };

      // A budget of 0 is spent at once.
      await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
      await race();
      await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
      await race();
      await Promise.all([first.stop(), second.stop()]);

      expect(await changes()).toEqual([
        { state: 'firing', notification: 'sent', attempts: 1 },
        { state: 'ok', notification: 'sent', attempts: 1 },
      ]);
      expect(receiver.messages.map((m) => m.json.type)).toEqual(['alert.firing', 'alert.resolved']);
      expect(new Set(receiver.messages.map((m) => m.headers['webhook-id'])).size).toBe(2);
    });

    describe('two ROLE=worker processes checking every second', () => {
      const workers: ServerProcess[] = [];

      beforeAll(async () => {
        const env = {
          ROLE: 'worker',
          DATABASE_URL: app.database.url as string,
          SECRETS_KEY: app.database.secretsKey,
          DELIVERY_ALLOW_PRIVATE: 'true',
          ALERT_INTERVAL_S: '1',
        };
        workers.push(await startServerProcess(env), await startServerProcess(env));
      }, 60_000);

      afterAll(async () => {
        await Promise.all(workers.map((worker) => worker.stop()));
      });

      it('notify once when an alert starts firing and once when it clears', async () => {
        await budgetAlert();
        await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
        await eventually(() => receiver.messages.length === 1, { what: 'alert.firing' });
        const scrape = await fetch(`${workers[0]?.baseUrl}/metrics`);
        expect(await scrape.text()).toMatch(/^hookprompt_alerts_firing 1$/m);

        await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
        await eventually(() => receiver.messages.length === 2, { what: 'alert.resolved' });
        const after = await fetch(`${workers[1]?.baseUrl}/metrics`);
        expect(await after.text()).toMatch(/^hookprompt_alerts_firing 0$/m);

        expect(receiver.messages.map((m) => m.json.type)).toEqual([
          'alert.firing',
          'alert.resolved',
        ]);
        expect(receiver.messages.every((m) => m.verifiedWith.length === 1)).toBe(true);
        expect(await changes()).toEqual([
          { state: 'firing', notification: 'sent', attempts: 1 },
          { state: 'ok', notification: 'sent', attempts: 1 },
        ]);
      });
    });
  },
);

import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAlertsEvaluator } from '../../src/alerts/alerts-evaluator.js';
import { openPostgres } from '../../src/db/postgres.js';
import { useFixture, useReplyReceiver, useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';
import { alertChanges, budgetAlert, resetAlerts, trustAlertSecret } from './budget-alert.js';

// Two evaluators in one process on two connections; alerts-race.process.test.ts runs two
// worker processes.
describe.skipIf(!testDatabaseUrl)(
  'alerts evaluated on two connections at once (real PostgreSQL only: PGlite serves one process)',
  () => {
    const receiver = useReplyReceiver();
    const { app, driver } = useTestApp({ env: { DELIVERY_ALLOW_PRIVATE: 'true' } });
    const secondPool = useFixture(
      async () => openPostgres({ url: app.database.url as string, max: 10 }),
      { stop: (pool) => pool.close() },
    );

    beforeAll(() => trustAlertSecret(driver, receiver));
    beforeEach(() => resetAlerts(app, driver, receiver));

    it('record and notify each change once when evaluations on two connections race', async () => {
      await budgetAlert(driver, receiver);
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

      expect(await alertChanges(app)).toEqual([
        { state: 'firing', notification: 'sent', attempts: 1 },
        { state: 'ok', notification: 'sent', attempts: 1 },
      ]);
      expect(receiver.messages.map((m) => m.json.type)).toEqual(['alert.firing', 'alert.resolved']);
      expect(new Set(receiver.messages.map((m) => m.headers['webhook-id'])).size).toBe(2);
    });
  },
);

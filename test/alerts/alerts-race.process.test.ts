import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { useFixture, useReplyReceiver, useTestApp } from '../support/harness.js';
import { startServerProcess } from '../support/server-process.js';
import { testDatabaseUrl } from '../support/test-database.js';
import { alertChanges, budgetAlert, trustAlertSecret } from './budget-alert.js';

// Two worker processes evaluate alerts on one database (alerts-race.test.ts races two
// evaluators in one process).
describe.skipIf(!testDatabaseUrl)(
  'two ROLE=worker processes checking alerts every second (real PostgreSQL only)',
  () => {
    const receiver = useReplyReceiver();
    const { app, driver } = useTestApp({ env: { DELIVERY_ALLOW_PRIVATE: 'true' } });
    const workers = useFixture(
      async () => {
        const env = {
          ROLE: 'worker',
          DATABASE_URL: app.database.url as string,
          SECRETS_KEY: app.database.secretsKey,
          DELIVERY_ALLOW_PRIVATE: 'true',
          ALERT_INTERVAL_S: '1',
        };
        return Promise.all([startServerProcess(env), startServerProcess(env)]);
      },
      { stop: (started) => Promise.all(started.map((worker) => worker.stop())) },
    );

    beforeAll(() => trustAlertSecret(driver, receiver));

    it('notify once when an alert starts firing and once when it clears', async () => {
      await budgetAlert(driver, receiver);
      await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
      await eventually(() => receiver.messages.length === 1, { what: 'alert.firing' });
      const scrape = await fetch(`${workers[0]?.baseUrl}/metrics`);
      expect(await scrape.text()).toMatch(/^hookprompt_alerts_firing 1$/m);

      await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
      await eventually(() => receiver.messages.length === 2, { what: 'alert.resolved' });
      const after = await fetch(`${workers[1]?.baseUrl}/metrics`);
      expect(await after.text()).toMatch(/^hookprompt_alerts_firing 0$/m);

      expect(receiver.messages.map((m) => m.json.type)).toEqual(['alert.firing', 'alert.resolved']);
      expect(receiver.messages.every((m) => m.verifiedWith.length === 1)).toBe(true);
      expect(await alertChanges(app)).toEqual([
        { state: 'firing', notification: 'sent', attempts: 1 },
        { state: 'ok', notification: 'sent', attempts: 1 },
      ]);
    });
  },
);

import { beforeEach, describe, expect, it } from 'vitest';
import { measureAlerts } from '../../src/alerts/measure-alerts.js';
import { claimNotifications } from '../../src/alerts/queue-claim.js';
import { releaseNotification } from '../../src/alerts/queue-release.js';
import { retryNotification } from '../../src/alerts/queue-retry.js';
import { markSent } from '../../src/alerts/queue-sent.js';
import { openPostgres } from '../../src/db/postgres.js';
import { useFixture, useReplyReceiver, useTestApp } from '../support/harness.js';
import { testDatabaseUrl } from '../support/test-database.js';
import { budgetAlert, resetAlerts } from './budget-alert.js';

const RETRIES = { maxAttempts: 6, baseMs: 30_000 };
const GIVE_UP = { error: 'refused', final: true, notBeforeMs: 0 };

const receiver = useReplyReceiver();
const { app, driver } = useTestApp({ env: { DELIVERY_ALLOW_PRIVATE: 'true' } });

/** One alert fired by a spent budget: one notification pending, none sent. */
async function pendingNotification(): Promise<void> {
  await budgetAlert(driver, receiver);
  await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
  expect(await measureAlerts(app.ctx.db)).toBe(1);
}

async function notification() {
  const { rows } = await app.ctx.db.query<{
    notification: string;
    attempts: number;
    locked_by: string | null;
    last_error: string | null;
    due_in_s: number | null;
  }>(
    `select notification, attempts, locked_by, last_error,
       round(extract(epoch from locked_until - now()))::integer as due_in_s
     from alert_changes`,
  );
  return rows;
}

beforeEach(() => resetAlerts(app, driver, receiver));

describe('alert notification retries', () => {
  it('wait 30 s doubled per attempt, or the receiver’s Retry-After when longer, on the database clock', async () => {
    await pendingNotification();
    const [claimed] = await claimNotifications(app.ctx.db, 'w', 1, 60_000);
    expect(claimed).toMatchObject({ attempts: 1 });
    const failure = { error: 'busy', final: false, notBeforeMs: 0 };
    expect(await retryNotification(app.ctx.db, claimed!.id, 'w', failure, RETRIES)).toBe('pending');
    expect(await notification()).toEqual([
      { notification: 'pending', attempts: 1, locked_by: null, last_error: 'busy', due_in_s: 30 },
    ]);

    await app.ctx.db.query(`update alert_changes set locked_until = null, attempts = 2`);
    const [again] = await claimNotifications(app.ctx.db, 'w', 1, 60_000);
    const later = { ...failure, notBeforeMs: 600_000 };
    await retryNotification(app.ctx.db, again!.id, 'w', later, RETRIES);
    expect(await notification()).toMatchObject([{ attempts: 3, due_in_s: 600 }]);
  });

  it('give a notification up after its last attempt', async () => {
    await pendingNotification();
    await app.ctx.db.query(`update alert_changes set attempts = 5`);
    const [claimed] = await claimNotifications(app.ctx.db, 'w', 1, 60_000);
    const failure = { error: 'busy', final: false, notBeforeMs: 0 };
    expect(await retryNotification(app.ctx.db, claimed!.id, 'w', failure, RETRIES)).toBe('failed');
    expect(await notification()).toMatchObject([
      { notification: 'failed', attempts: 6, due_in_s: null },
    ]);
  });
});

describe.skipIf(!testDatabaseUrl)(
  'a notification whose lease ran out, on two connections (real PostgreSQL only: PGlite serves one connection)',
  () => {
    const secondPool = useFixture(
      async () => openPostgres({ url: app.database.url as string, max: 2 }),
      { stop: (pool) => pool.close() },
    );

    it('is finished only by the process that claimed it again, however late the first one answers', async () => {
      await pendingNotification();
      // The first process's lease ends at once: as if its send outlasted the lease.
      const [first] = await claimNotifications(app.ctx.db, 'first', 1, 0);
      const [second] = await claimNotifications(secondPool, 'second', 1, 60_000);
      expect(second?.id).toBe(first?.id);
      expect(second).toMatchObject({ attempts: 2 });
      const id = first!.id;

      // While the second holds it, the first cannot end it, put it back, or give it up.
      expect(await markSent(app.ctx.db, id, 'first')).toBe(false);
      expect(await retryNotification(app.ctx.db, id, 'first', GIVE_UP, RETRIES)).toBeUndefined();
      expect(await releaseNotification(app.ctx.db, id, 'first')).toBe(false);
      expect(await notification()).toMatchObject([
        { notification: 'pending', attempts: 2, locked_by: 'second', last_error: null },
      ]);

      expect(await markSent(secondPool, id, 'second')).toBe(true);
      // Nor write over the second's outcome afterwards.
      expect(await retryNotification(app.ctx.db, id, 'first', GIVE_UP, RETRIES)).toBeUndefined();
      expect(await markSent(app.ctx.db, id, 'first')).toBe(false);
      expect(await notification()).toEqual([
        { notification: 'sent', attempts: 2, locked_by: null, last_error: null, due_in_s: null },
      ]);
    });
  },
);

import { expect } from 'vitest';
import type { Driver } from '../support/driver.js';
import type { ReplyReceiver } from '../support/reply-receiver.js';
import type { TestApp } from '../support/test-app.js';

/** Shared by the alert race tests: one alert on half the budget, notified to `receiver`. */
export async function budgetAlert(
  driver: Driver,
  receiver: ReplyReceiver,
): Promise<{ id: string }> {
  const res = await driver.api('post', '/alerts').send({
    name: 'Budget half spent',
    condition: { type: 'budget', percent: 50 },
    notify: { kind: 'webhook', url: receiver.url('/alerts') },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

/** Makes `receiver` verify notifications with the workspace's alert signing secret. */
export async function trustAlertSecret(driver: Driver, receiver: ReplyReceiver): Promise<void> {
  receiver.secrets = [(await driver.api('get', '/alerts/secret')).body.secret as string];
}

/** Every recorded change of an alert's state, oldest first. */
export async function alertChanges(app: TestApp) {
  const { rows } = await app.ctx.db.query<{
    state: string;
    notification: string;
    attempts: number;
  }>('select state, notification, attempts from alert_changes order by id');
  return rows;
}

/** Between tests: no alert, no budget, nothing received. */
export async function resetAlerts(app: TestApp, driver: Driver, receiver: ReplyReceiver) {
  receiver.messages.length = 0;
  await app.ctx.db.query('delete from alerts');
  await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
}

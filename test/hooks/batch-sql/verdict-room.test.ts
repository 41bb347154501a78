import { describe, expect, it } from 'vitest';
import { useBatchStatement } from './batch-setup.js';

describe('the quota and budget verdicts (verdict-room.ts)', () => {
  const { driver, event, store, chatsUsed, eventRow, storedAs } = useBatchStatement();

  it('refuses what the quota has no room for, in the batch order, naming the quota (403)', async () => {
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used + 1 }).expect(200);
    try {
      const [fits, over] = await store([event(), event()]);

      storedAs('accepted', fits);
      expect(over).toMatchObject({
        outcome: 'quota_exceeded',
        quota: { chatQuota: used + 1, resetsAt: expect.any(Date) },
      });
      const resetsAt = (over as { quota: { resetsAt: Date } }).quota.resetsAt;
      expect(resetsAt.getUTCDate()).toBe(1);
      expect(resetsAt.getTime()).toBeGreaterThan(Date.now());
      expect(await eventRow(storedAs('quota_exceeded', over))).toMatchObject({
        status: 'rejected',
        error: 'quota_exceeded',
      });
      expect(await chatsUsed()).toBe(used + 1);
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });

  it('refuses every request while the month has spent the budget, naming it (403)', async () => {
    const used = await chatsUsed();
    await driver.setWorkspace({ monthly_budget_usd: 0 }).expect(200);
    try {
      const results = await store([event(), event()]);

      for (const result of results) {
        expect(result).toMatchObject({
          outcome: 'budget_exceeded',
          budget: { monthlyBudgetUsd: 0, resetsAt: expect.any(Date) },
        });
        expect(await eventRow(storedAs('budget_exceeded', result))).toMatchObject({
          status: 'rejected',
          error: 'budget_exceeded',
        });
      }
      expect(await chatsUsed()).toBe(used);
    } finally {
      await driver.setWorkspace({ monthly_budget_usd: null }).expect(200);
    }
  });

  it('decides the quota before the budget', async () => {
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used, monthly_budget_usd: 0 }).expect(200);
    try {
      const [refused] = await store([event()]);

      expect(refused).toMatchObject({ outcome: 'quota_exceeded' });
    } finally {
      await driver.setWorkspace({ chat_quota: 1000, monthly_budget_usd: null }).expect(200);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { useBatchStatement } from './batch-setup.js';

describe('a key repeated within the batch (verdict-repeat.ts)', () => {
  const { driver, event, store, chatsUsed, eventRow, storedAs } = useBatchStatement();

  it('answers a repeat with the first request of the batch with its key, once that is stored', async () => {
    const before = await chatsUsed();

    const [first, repeat] = await store([
      event({ dedupKey: 'twice' }),
      event({ dedupKey: 'twice' }),
    ]);

    const firstId = storedAs('accepted', first);
    expect(repeat).toEqual({
      outcome: 'duplicate',
      first: { id: firstId, status: 'pending', reply: null, error: null },
    });
    expect((await eventRow(firstId))?.duplicates).toBe(1);
    expect(await chatsUsed()).toBe(before + 1);
  });

  it('shares the refusal of the first request with its key, storing a refused event for each', async () => {
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used }).expect(200);
    try {
      const [first, repeat] = await store([
        event({ dedupKey: 'refused-twice' }),
        event({ dedupKey: 'refused-twice' }),
      ]);

      const ids = [storedAs('quota_exceeded', first), storedAs('quota_exceeded', repeat)];
      for (const id of ids)
        expect(await eventRow(id)).toMatchObject({ status: 'rejected', dedup_key: null });
      expect(await chatsUsed()).toBe(used);
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });
});

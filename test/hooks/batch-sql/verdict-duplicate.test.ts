import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { IncomingEvent } from '../../../src/hooks/store-event-batch.js';
import { useBatchStatement } from './batch-setup.js';

describe('the duplicate and key_reused verdicts (verdict-duplicate.ts)', () => {
  const { driver, event, store, chatsUsed, eventRow, eventCount, storedAs } = useBatchStatement();
  const withBody = (dedupKey: string, payload: string): IncomingEvent =>
    event({ dedupKey, payload, bodyHash: createHash('sha256').update(payload).digest('hex') });

  it('answers a request whose key a stored event holds within its window with that event, storing nothing and spending nothing', async () => {
    const firstId = storedAs('accepted', (await store([event({ dedupKey: 'held' })]))[0]);
    const [before, events] = [await chatsUsed(), await eventCount()];

    for (const keys of ['looked-up', 'on-insert'] as const) {
      // Finding keys on insert, a workspace with room enough does not look them up: the
      // statement fails instead (see store-event-batch.test.ts); with none left it does.
      if (keys === 'on-insert') await pinQuota(0);
      const [duplicate] = await store([event({ dedupKey: 'held' })], keys);
      expect(duplicate).toEqual({
        outcome: 'duplicate',
        first: { id: firstId, status: 'pending', reply: null, error: null },
      });
    }
    await pinQuota(1000);

    expect((await eventRow(firstId))?.duplicates).toBe(2);
    expect(await eventCount()).toBe(events);
    expect(await chatsUsed()).toBe(before);
  });

  it('refuses another body under a held key (422), recorded as rejected, spending nothing', async () => {
    const firstId = storedAs('accepted', (await store([withBody('bodies', '{"v":1}')]))[0]);
    const before = await chatsUsed();

    const [reused] = await store([withBody('bodies', '{"v":2}')]);

    expect(reused).toMatchObject({ outcome: 'key_reused', firstId });
    const reusedId = (reused as { eventId: string }).eventId;
    expect(await eventRow(reusedId)).toMatchObject({
      status: 'rejected',
      error: 'idempotency_key_reused',
      payload: '{"v":2}',
      dedup_key: null,
    });
    expect((await eventRow(firstId))?.duplicates).toBe(0);
    expect(await chatsUsed()).toBe(before);
  });

  /** Leaves the workspace room for `room` more chats. */
  const pinQuota = async (room: number) => {
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used + room }).expect(200);
  };
});

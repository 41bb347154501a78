import { describe, expect, it } from 'vitest';
import { useBatchStatement } from './batch-setup.js';

describe('the stored verdict (verdict-stored.ts)', () => {
  const { event, store, chatsUsed, eventRow, storedAs } = useBatchStatement();

  it('stores a plain request as a pending event with its key and thread, spending one chat', async () => {
    const before = await chatsUsed();

    const [stored] = await store([
      event({ dedupKey: 'plain-key', threadKey: 'order-1', payload: '{"order":{"id":7}}' }),
    ]);

    const id = storedAs('accepted', stored);
    expect(await eventRow(id)).toEqual({
      status: 'pending',
      error: null,
      payload: '{"order":{"id":7}}',
      duplicates: 0,
      thread_key: 'order-1',
      dedup_key: 'plain-key',
    });
    expect(await chatsUsed()).toBe(before + 1);
  });

  it('answers the requests of a batch in their order, each with an event of its own', async () => {
    const before = await chatsUsed();

    const results = await store([event(), event(), event()]);

    const ids = results.map((result) => storedAs('accepted', result));
    expect(new Set(ids).size).toBe(3);
    expect(ids.map(Number)).toEqual([...ids.map(Number)].sort((a, b) => a - b));
    expect(await chatsUsed()).toBe(before + 3);
  });
});

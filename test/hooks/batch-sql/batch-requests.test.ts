import { describe, expect, it } from 'vitest';
import { useBatchStatement } from './batch-setup.js';

describe("the pipeline's verdicts, rejected and filtered (batch-requests.ts)", () => {
  const { driver, event, store, chatsUsed, eventRow, storedAs } = useBatchStatement();

  it('records a refused request as a rejected event with its detail, spending nothing', async () => {
    const before = await chatsUsed();

    const [refused] = await store([
      event({
        refusal: 'invalid_json',
        refusalDetail: 'The body is not JSON',
        payload: '{"start',
        payloadTruncated: true,
        dedupKey: 'refused-key',
      }),
    ]);

    const id = storedAs('rejected', refused);
    expect(await eventRow(id)).toMatchObject({
      status: 'rejected',
      error: 'invalid_json',
      payload: '{"start',
      dedup_key: null,
    });
    expect((await driver.api('get', `/events/${id}`)).body).toMatchObject({
      payload_truncated: true,
    });
    expect(await chatsUsed()).toBe(before);
  });

  it('stores a filtered request finished, with its condition and its key, spending nothing, whatever the quota', async () => {
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used }).expect(200);
    try {
      const [filtered] = await store([
        event({ filteredBy: 'order.id > 1', dedupKey: 'filtered-key', threadKey: 'order-1' }),
      ]);

      const id = storedAs('filtered', filtered);
      expect(await eventRow(id)).toMatchObject({
        status: 'filtered',
        error: 'order.id > 1',
        thread_key: null,
        dedup_key: 'filtered-key',
      });
      // Its key is held as an accepted event's is: a repeat is its duplicate.
      const [repeat] = await store([event({ dedupKey: 'filtered-key' })]);
      expect(repeat).toMatchObject({ outcome: 'duplicate', first: { id, status: 'filtered' } });
      expect(await chatsUsed()).toBe(used);
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { useBatchStatement } from './batch-setup.js';

describe('the channel_changed verdict (verdict-channel-changed.ts)', () => {
  const { driver, channel, event, store, chatsUsed, eventCount, storedAs } = useBatchStatement();

  it('stores nothing for a channel disabled since the pipeline checked it, but records its refusals', async () => {
    const [before, events] = [await chatsUsed(), await eventCount()];
    await driver.updateChannel(channel().id, { enabled: false }).expect(200);
    try {
      const [changed, refused] = await store([
        event(),
        event({ refusal: 'invalid_json', payload: '{' }),
      ]);

      expect(changed).toEqual({ outcome: 'channel_changed' });
      storedAs('rejected', refused);
      expect(await eventCount()).toBe(events + 1);
      expect(await chatsUsed()).toBe(before);
    } finally {
      await driver.updateChannel(channel().id, { enabled: true }).expect(200);
    }
  });

  it('stores nothing, not even a refusal, for a channel deleted since', async () => {
    const doomed = await driver.receivingChannel(await driver.createChannel({ name: 'Doomed' }));
    await driver.api('delete', `/channels/${doomed.id}`).expect(204);

    const results = await store([
      event({ channel: doomed }),
      event({ channel: doomed, refusal: 'invalid_json', payload: '{' }),
    ]);

    expect(results).toEqual([{ outcome: 'channel_changed' }, { outcome: 'channel_changed' }]);
  });
});

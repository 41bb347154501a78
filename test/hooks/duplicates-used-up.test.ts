import { afterEach, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';

// The receiver finds a taken key by failing its insert until it has met one, then looks keys
// up for a minute (EventBatchStore): no request here repeats one while there is room, so each
// repeat below reaches a receiver that does not look keys up by default, as in production.
const { driver } = useTestApp();

afterEach(async () => {
  await driver.setWorkspace({ chat_quota: 1000, monthly_budget_usd: null }).expect(200);
});

const chatsUsed = async () =>
  (await driver.api('get', '/workspace').expect(200)).body.chats_used as number;

describe('a repeat of an accepted request while the workspace can take no more', () => {
  it.each([
    ['the quota is used up', 'quota_exceeded', async () => ({ chat_quota: await chatsUsed() })],
    ['the budget is spent', 'budget_exceeded', async () => ({ monthly_budget_usd: 0 })],
  ])('is its duplicate (200) when %s; a new request is refused', async (_, code, usedUp) => {
    const channel = await driver.createChannel();
    const keyed = { headers: { 'Idempotency-Key': `repeat-${code}` } };
    const first = await driver.sendEvent(channel.webhook_url, { n: 1 }, keyed);
    expect(first.status).toBe(200);
    const used = await chatsUsed();
    await driver.setWorkspace(await usedUp()).expect(200);

    const again = await driver.sendEvent(channel.webhook_url, { n: 1 }, keyed);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      status: 'received',
      event_id: first.body.event_id,
      duplicate: true,
    });
    // Another body under the key is still 422, a new request still refused.
    const reused = await driver.sendEvent(channel.webhook_url, { n: 2 }, keyed);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused' });
    const fresh = await driver.sendEvent(channel.webhook_url, { n: 3 });
    expect(fresh.status).toBe(403);
    expect(fresh.body.code).toBe(code);

    const events = await driver.eventsOf(channel.id);
    expect(events.map((e) => [e.status, e.error])).toEqual([
      ['pending', null],
      ['rejected', 'idempotency_key_reused'],
      ['rejected', code],
    ]);
    const stored = await driver.api('get', `/events/${first.body.event_id as string}`);
    expect(stored.body.duplicates).toBe(1);
    expect(await chatsUsed()).toBe(used);
  });
});

import { describe, expect, it } from 'vitest';
import { EventsRetention } from '../../src/events/events-retention.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { fakeReplyTo } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

const { app, driver, ai } = useTestApp({ ai: true, env: { DEFAULT_CHAT_QUOTA: '1000' } });

const chatsUsed = async () =>
  (await driver.api('get', '/workspace').expect(200)).body.chats_used as number;

describe('duplicates (auto mode, the default)', () => {
  it('stores one of 50 concurrent requests with one webhook-id: 50 × 200, one event_id, one chat, one AI call', async () => {
    const channel = await driver.createChannel({ template: 'Order {{order.id}}' });
    const before = await chatsUsed();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        driver.sendEvent(
          channel.webhook_url,
          { order: { id: 50 } },
          {
            headers: { 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' },
          },
        ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    const ids = new Set(answers.map((a) => a.body.event_id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.body.duplicate === true)).toHaveLength(49);
    expect(answers.filter((a) => a.body.duplicate === undefined)).toHaveLength(1);

    const events = await driver.eventsOf(channel.id);
    expect(events).toHaveLength(1);
    const metrics = await (await fetch(`${app.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^hookprompt_events_duplicate_total 49$/m);
    expect(await chatsUsed()).toBe(before + 1);
    const requestsBefore = ai.requests.length;
    await createWorker(app.ctx).runOnce();
    expect(ai.requests.length - requestsBefore).toBe(1);

    const event = await driver.api('get', `/events/${[...ids][0]}`).expect(200);
    expect(event.body).toMatchObject({ status: 'replied', duplicates: 49 });

    // A later retry gets the first event's outcome, reply included, and still uses nothing.
    const retry = await driver.sendEvent(
      channel.webhook_url,
      { order: { id: 50 } },
      {
        headers: { 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' },
      },
    );
    expect(retry.body).toEqual({
      status: 'replied',
      event_id: [...ids][0],
      reply: fakeReplyTo('Order 50'),
      duplicate: true,
    });
    expect(await chatsUsed()).toBe(before + 1);
    expect((await driver.api('get', `/events/${[...ids][0]}`)).body.duplicates).toBe(50);
  });

  it.each([
    ['svix-id', 'msg_svix'],
    ['Idempotency-Key', 'idem-1'],
    ['X-GitHub-Delivery', '72d3162e-cc78-11e3-81ab-4c9367dc0958'],
    ['X-Shopify-Webhook-Id', 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043'],
  ])('recognises %s', async (header, value) => {
    const channel = await driver.createChannel();
    const first = await driver.sendEvent(channel.webhook_url, undefined, {
      headers: { [header]: value },
    });
    const again = await driver.sendEvent(channel.webhook_url, undefined, {
      headers: { [header]: value },
    });
    expect(again.body).toEqual({
      status: 'received',
      event_id: first.body.event_id,
      duplicate: true,
    });
  });

  it('does not dedup requests without a key, nor keys of another channel', async () => {
    const [a, b] = [await driver.createChannel(), await driver.createChannel()];
    const plain = await Promise.all([
      driver.sendEvent(a.webhook_url),
      driver.sendEvent(a.webhook_url),
    ]);
    expect(new Set(plain.map((r) => r.body.event_id)).size).toBe(2);
    const keyed = { headers: { 'webhook-id': 'same-id' } };
    const one = await driver.sendEvent(a.webhook_url, undefined, keyed);
    const other = await driver.sendEvent(b.webhook_url, undefined, keyed);
    expect(other.body.event_id).not.toBe(one.body.event_id);
    expect(other.body.duplicate).toBeUndefined();
  });

  it('answers a duplicate even when the quota is used up: duplicates use no quota', async () => {
    const channel = await driver.createChannel();
    const keyed = { headers: { 'Idempotency-Key': 'quota-key' } };
    const first = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    const used = await chatsUsed();
    await driver.setWorkspace({ chat_quota: used }).expect(200);
    try {
      const again = await driver.sendEvent(channel.webhook_url, undefined, keyed);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ event_id: first.body.event_id, duplicate: true });
      const fresh = await driver.sendEvent(channel.webhook_url, undefined, {
        headers: { 'Idempotency-Key': 'another-key' },
      });
      expect(fresh.body.code).toBe('quota_exceeded');
      // a refused request does not take its key: once there is quota again, it is accepted
      await driver.setWorkspace({ chat_quota: used + 1 }).expect(200);
      const retried = await driver.sendEvent(channel.webhook_url, undefined, {
        headers: { 'Idempotency-Key': 'another-key' },
      });
      expect(retried.status).toBe(200);
      expect(retried.body.duplicate).toBeUndefined();
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });
});

describe('one idempotency key, two bodies', () => {
  it('answers 422 idempotency_key_reused with the first event_id, records the request as rejected, and leaves the first event as it was', async () => {
    const channel = await driver.createChannel({ template: 'Pay {{amount}}' });
    const keyed = { headers: { 'Idempotency-Key': 'pay-7' } };
    const first = await driver.sendEvent(channel.webhook_url, { amount: 1 }, keyed);
    expect(first.status).toBe(200);
    const used = await chatsUsed();

    const reused = await driver.sendEvent(channel.webhook_url, { amount: 1000000 }, keyed);
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(reused.body).toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
      event_id: first.body.event_id,
    });

    const events = await driver.eventsOf(channel.id);
    expect(events.map((e) => [e.status, e.error, e.payload])).toEqual([
      ['pending', null, '{"amount":1}'],
      ['rejected', 'idempotency_key_reused', '{"amount":1000000}'],
    ]);
    const firstEvent = await driver.api('get', `/events/${first.body.event_id as string}`);
    expect(firstEvent.body).toMatchObject({ payload: '{"amount":1}', duplicates: 0 });
    expect(await chatsUsed()).toBe(used);

    // The same body again is still a duplicate of the first event.
    const retry = await driver.sendEvent(channel.webhook_url, { amount: 1 }, keyed);
    expect(retry.body).toMatchObject({ event_id: first.body.event_id, duplicate: true });
  });

  it('answers 422 before the quota: a reused key is refused as such when no chat is left', async () => {
    const channel = await driver.createChannel();
    const keyed = { headers: { 'webhook-id': 'msg-quota-reused' } };
    const first = await driver.sendEvent(channel.webhook_url, { v: 1 }, keyed);
    await driver.setWorkspace({ chat_quota: await chatsUsed() }).expect(200);
    try {
      const reused = await driver.sendEvent(channel.webhook_url, { v: 2 }, keyed);
      expect(reused.status).toBe(422);
      expect(reused.body).toMatchObject({ event_id: first.body.event_id });
    } finally {
      await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
    }
  });

  it('takes keys from different headers as different keys', async () => {
    const channel = await driver.createChannel();
    const idempotency = await driver.sendEvent(
      channel.webhook_url,
      { n: 1 },
      {
        headers: { 'Idempotency-Key': 'K' },
      },
    );
    const github = await driver.sendEvent(
      channel.webhook_url,
      { n: 2 },
      {
        headers: { 'X-GitHub-Delivery': 'K' },
      },
    );
    expect([idempotency.status, github.status]).toEqual([200, 200]);
    expect(github.body.duplicate).toBeUndefined();
    expect(github.body.event_id).not.toBe(idempotency.body.event_id);
    expect((await driver.eventsOf(channel.id)).map((e) => e.status)).toEqual([
      'pending',
      'pending',
    ]);
  });

  it('refuses another body in header mode too, but not in payload mode, where the key is part of the body', async () => {
    const byHeader = await driver.createChannel({ dedup: { mode: 'header', field: 'X-Event-Id' } });
    const headers = { headers: { 'X-Event-Id': 'e-1' } };
    const first = await driver.sendEvent(byHeader.webhook_url, { v: 1 }, headers);
    const other = await driver.sendEvent(byHeader.webhook_url, { v: 2 }, headers);
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ event_id: first.body.event_id });

    const byPayload = await driver.createChannel({ dedup: { mode: 'payload', field: 'id' } });
    const a = await driver.sendEvent(byPayload.webhook_url, { id: 5, v: 1 });
    const b = await driver.sendEvent(byPayload.webhook_url, { id: 5, v: 2 });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ event_id: a.body.event_id, duplicate: true });
  });

  it("accepts another body once the key's window has passed", async () => {
    const channel = await driver.createChannel({ dedup: { mode: 'auto', window_s: 60 } });
    const keyed = { headers: { 'webhook-id': 'msg-window' } };
    const first = await driver.sendEvent(channel.webhook_url, { v: 1 }, keyed);
    await app.ctx.db.query(
      `update events set dedup_expires_at = now() - interval '1 second' where channel_id = $1`,
      [channel.id],
    );
    const later = await driver.sendEvent(channel.webhook_url, { v: 2 }, keyed);
    expect(later.status).toBe(200);
    expect(later.body.event_id).not.toBe(first.body.event_id);
    const again = await driver.sendEvent(channel.webhook_url, { v: 1 }, keyed);
    expect(again.status).toBe(422);
    expect(again.body.event_id).toBe(later.body.event_id);
  });

  it("stores one of 40 concurrent requests with one key and two bodies: its body's requests are its duplicates, the others 422", async () => {
    const channel = await driver.createChannel();
    const keyed = { headers: { 'webhook-id': 'msg-raced-bodies' } };
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        driver.sendEvent(channel.webhook_url, { body: i % 2 }, keyed).then((res) => ({
          body: i % 2,
          res,
        })),
      ),
    );
    const stored = (await driver.eventsOf(channel.id)).filter((e) => e.status !== 'rejected');
    expect(stored).toHaveLength(1);
    const winner = stored[0] as (typeof stored)[number];
    const winnerBody = (JSON.parse(winner.payload) as { body: number }).body;
    for (const { body, res } of answers) {
      expect(res.status).toBe(body === winnerBody ? 200 : 422);
      expect(res.body.event_id).toBe(winner.id);
    }
    const rejected = (await driver.eventsOf(channel.id)).filter((e) => e.status === 'rejected');
    expect(rejected).toHaveLength(20);
    expect(new Set(rejected.map((e) => e.error))).toEqual(new Set(['idempotency_key_reused']));
    const first = await driver.api('get', `/events/${winner.id}`);
    expect(first.body.duplicates).toBe(19);
  });
});

describe('duplicates by header, by payload field, and off', () => {
  it('header mode uses the named header', async () => {
    const channel = await driver.createChannel({ dedup: { mode: 'header', field: 'X-Event-Id' } });
    expect(channel).toMatchObject({
      dedup: { mode: 'header', field: 'x-event-id', window_s: 86400 },
    });
    const send = (id: string) =>
      driver.sendEvent(channel.webhook_url, undefined, {
        headers: { 'x-event-id': id, 'webhook-id': 'ignored-here' },
      });
    const [a, b, c] = [await send('e1'), await send('e1'), await send('e2')];
    expect(b.body).toMatchObject({ event_id: a.body.event_id, duplicate: true });
    expect(c.body.event_id).not.toBe(a.body.event_id);
  });

  it('payload mode uses the field as {{field}} renders it; empty means no dedup', async () => {
    const channel = await driver.createChannel({
      dedup: { mode: 'payload', field: 'order.id', window_s: 3600 },
    });
    const a = await driver.sendEvent(channel.webhook_url, '{"order":{"id":9007199254740993}}');
    const b = await driver.sendEvent(channel.webhook_url, '{"order": {"id": 9007199254740993}}');
    const c = await driver.sendEvent(channel.webhook_url, { order: { id: 2 } });
    expect(b.body).toMatchObject({ event_id: a.body.event_id, duplicate: true });
    expect(c.body.duplicate).toBeUndefined();
    const noKey = await Promise.all([
      driver.sendEvent(channel.webhook_url, { order: {} }),
      driver.sendEvent(channel.webhook_url, { order: {} }),
    ]);
    expect(noKey.every((r) => r.status === 200 && r.body.duplicate === undefined)).toBe(true);
  });

  it('off stores every request', async () => {
    const channel = await driver.createChannel({ dedup: { mode: 'off' } });
    const keyed = { headers: { 'webhook-id': 'off-id' } };
    const a = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    const b = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    expect(b.body.event_id).not.toBe(a.body.event_id);
  });

  it('refuses a mode without its field and a window out of range', async () => {
    const channel = await driver.createChannel();
    for (const dedup of [
      { mode: 'header' },
      { mode: 'payload' },
      { window_s: 0 },
      { window_s: 2592001 },
      { mode: 'sometimes' },
    ]) {
      const res = await driver.updateChannel(channel.id, { dedup });
      expect(res.status, JSON.stringify(dedup)).toBe(400);
      expect(res.body.detail).toMatch(/^dedup/);
    }
  });
});

describe('the dedup window', () => {
  it('accepts a key again once its window has passed; the earlier event keeps all but its key', async () => {
    const channel = await driver.createChannel({ dedup: { mode: 'auto', window_s: 60 } });
    const keyed = { headers: { 'webhook-id': 'window-id' } };
    const first = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    await driver.sendEvent(channel.webhook_url, undefined, keyed);
    // Move the key's expiry into the past instead of waiting a minute.
    await app.ctx.db.query(
      `update events set dedup_expires_at = now() - interval '1 second' where channel_id = $1`,
      [channel.id],
    );
    const later = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    expect(later.status).toBe(200);
    expect(later.body.duplicate).toBeUndefined();
    expect(later.body.event_id).not.toBe(first.body.event_id);
    const again = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    expect(again.body).toMatchObject({ event_id: later.body.event_id, duplicate: true });

    expect((await driver.eventsOf(channel.id)).map((e) => e.id).sort()).toEqual(
      [first.body.event_id, later.body.event_id].sort(),
    );
    const earlier = await driver.api('get', `/events/${first.body.event_id as string}`).expect(200);
    expect(earlier.body).toMatchObject({ status: 'pending', duplicates: 1 });
    expect(
      (await driver.api('get', `/events/${later.body.event_id as string}`)).body,
    ).toMatchObject({ duplicates: 1 });
  });

  it('forgets a key whose event retention deleted: the next request with it is a new event', async () => {
    const channel = await driver.createChannel({ dedup: { mode: 'auto', window_s: 2_592_000 } });
    const keyed = { headers: { 'webhook-id': 'retained-id' } };
    const first = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    // The event is replied and older than the retention period; its key's window is still open.
    await app.ctx.db.query(
      `update events set status = 'replied', reply = 'ok', completed_at = now(),
                         received_at = now() - interval '40 days'
       where id = $1`,
      [first.body.event_id],
    );
    const run = await new EventsRetention({
      db: app.ctx.db,
      log: app.ctx.log,
      retentionDays: 30,
      pauseMs: 0,
    }).runOnce();
    expect(run.deleted).toBeGreaterThanOrEqual(1);

    const retry = await driver.sendEvent(channel.webhook_url, undefined, keyed);
    expect(retry.status).toBe(200);
    expect(retry.body.duplicate).toBeUndefined();
    expect(retry.body.event_id).not.toBe(first.body.event_id);
    await driver.api('get', `/events/${retry.body.event_id as string}`).expect(200);
  });
});

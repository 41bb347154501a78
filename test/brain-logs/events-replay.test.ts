import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/worker/create-worker.js';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();
let orders: ChannelJson;

beforeAll(async () => {
  orders = await driver.createChannel({ name: 'Orders', template: 'Order {{order.id}}' });
});

beforeEach(async () => {
  const res = await driver.setWorkspace({ chat_quota: 1000, chats_used: 0 });
  expect(res.status).toBe(200);
});

async function receive(body: unknown = { order: { id: 1 } }): Promise<string> {
  const res = await driver.sendEvent(orders.webhook_url, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.event_id as string;
}

const work = () => createWorker(app.ctx).runOnce();
const getEvent = async (id: string) => (await driver.api('get', `/events/${id}`)).body;
const chatsUsed = async () => (await driver.api('get', '/workspace')).body.chats_used as number;

describe('POST /api/v1/events/{id}/replay', () => {
  it('asks again with the channel’s current template, keeping the earlier outcome in history', async () => {
    const id = await receive({ order: { id: 7 }, customer: 'Ada' });
    await work();
    const before = await getEvent(id);
    expect(before).toMatchObject({ status: 'replied', prompt: 'Order 7', attempts: 1 });

    await driver.updateChannel(orders.id, { template: 'Order {{order.id}} for {{customer}}' });
    const used = await chatsUsed();
    const res = await driver.api('post', `/events/${id}/replay`);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({
      id,
      status: 'pending',
      prompt: null,
      reply: null,
      error: null,
      attempts: 0,
      completed_at: null,
    });
    expect(res.body.history).toEqual([
      expect.objectContaining({
        prompt: 'Order 7',
        reply: before.reply,
        error: null,
        attempts: 1,
        completed_at: before.completed_at,
        model: null,
        usage: null,
      }),
    ]);
    expect(await chatsUsed()).toBe(used + 1);

    await work();
    const after = await getEvent(id);
    expect(after).toMatchObject({ status: 'replied', prompt: 'Order 7 for Ada', attempts: 1 });
    expect(after.history).toHaveLength(1);
    await driver.updateChannel(orders.id, { template: 'Order {{order.id}}' });
  });

  it('refuses an unfinished event with 409 event_unfinished', async () => {
    const id = await receive();
    const res = await driver.api('post', `/events/${id}/replay`);
    expect(res.status).toBe(409);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 409, code: 'event_unfinished' });
    await work();
  });

  it('answers 403 quota_exceeded when no chat is left, and changes nothing', async () => {
    const id = await receive();
    await work();
    await driver.setWorkspace({ chat_quota: await chatsUsed() });
    const res = await driver.api('post', `/events/${id}/replay`);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      code: 'quota_exceeded',
      chat_quota: await chatsUsed(),
      resets_at: expect.stringMatching(/^\d{4}-\d\d-01T00:00:00\.000Z$/),
    });
    expect(await getEvent(id)).toMatchObject({ status: 'replied', history: [] });
  });

  it('replays a refused request whose body is a complete object, once the quota allows', async () => {
    await driver.setWorkspace({ chat_quota: await chatsUsed() });
    const refused = await driver.sendEvent(orders.webhook_url, { order: { id: 99 } });
    expect(refused.status).toBe(403);
    const [stored] = (await driver.eventsOf(orders.id)).slice(-1);
    expect(stored).toMatchObject({ status: 'rejected', error: 'quota_exceeded' });

    await driver.setWorkspace({ chat_quota: 1000 });
    const res = await driver.api('post', `/events/${stored?.id}/replay`);
    expect(res.status, res.text).toBe(202);
    expect(res.body.history).toEqual([
      expect.objectContaining({ status: 'rejected', error: 'quota_exceeded', attempts: 0 }),
    ]);
    await work();
    expect(await getEvent(stored?.id as string)).toMatchObject({
      status: 'replied',
      prompt: 'Order 99',
    });
  });

  it('refuses a refused request whose body is not a complete object (409)', async () => {
    const bad = await driver.sendEvent(orders.webhook_url, '{"order": ');
    expect(bad.status).toBe(400);
    const [stored] = (await driver.eventsOf(orders.id)).slice(-1);
    const res = await driver.api('post', `/events/${stored?.id}/replay`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('event_not_replayable');
  });

  it('answers 404 for an event of no one or another workspace', async () => {
    expect((await driver.api('post', '/events/999999/replay')).status).toBe(404);
    expect((await driver.api('post', '/events/abc/replay')).status).toBe(404);
  });
});

describe('POST /api/v1/events/replay', () => {
  it('counts with dry_run, then replays every finished event of the filter', async () => {
    const channel = await driver.createChannel({ name: 'Bulk', template: 'Bulk {{n}}' });
    for (const n of [1, 2, 3]) {
      await driver.sendEvent(channel.webhook_url, { n, kind: n === 2 ? 'skip' : 'keep' });
    }
    await work();
    const waiting = await driver.sendEvent(channel.webhook_url, { n: 4, kind: 'keep' });

    const dry = await driver
      .api('post', '/events/replay')
      .send({ channel_id: channel.id, dry_run: true });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body).toEqual({ count: 3 }); // the pending one is not replayable
    const filtered = await driver
      .api('post', '/events/replay')
      .send({ channel_id: channel.id, 'payload.kind': 'keep', dry_run: true });
    expect(filtered.body).toEqual({ count: 2 });

    const used = await chatsUsed();
    const done = await driver
      .api('post', '/events/replay')
      .send({ channel_id: channel.id, 'payload.kind': 'keep', dry_run: false });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ count: 2 });
    expect(await chatsUsed()).toBe(used + 2);
    const events = await driver.eventsOf(channel.id);
    expect(events.map((e) => e.status)).toEqual(['pending', 'replied', 'pending', 'pending']);
    expect(events[3]?.id).toBe(waiting.body.event_id);
    await work();
  });

  it('replays none when the quota cannot pay for all (403 quota_exceeded)', async () => {
    const channel = await driver.createChannel({ name: 'Tight', template: 'T {{n}}' });
    for (const n of [1, 2]) await driver.sendEvent(channel.webhook_url, { n });
    await work();
    await driver.setWorkspace({ chat_quota: (await chatsUsed()) + 1 });
    const res = await driver
      .api('post', '/events/replay')
      .send({ channel_id: channel.id, dry_run: false });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('quota_exceeded');
    expect((await driver.eventsOf(channel.id)).map((e) => e.status)).toEqual([
      'replied',
      'replied',
    ]);
  });

  it('requires dry_run: a body without it replays nothing (400 naming the field)', async () => {
    const channel = await driver.createChannel({ name: 'Careful', template: 'C {{n}}' });
    await driver.sendEvent(channel.webhook_url, { n: 1 });
    await work();
    const used = await chatsUsed();
    for (const body of [{}, { channel_id: channel.id }]) {
      const res = await driver.api('post', '/events/replay').send(body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.detail).toMatch(/^dry_run: is required/);
      expect(res.body.errors).toEqual([{ path: 'dry_run', message: expect.any(String) }]);
    }
    const empty = await driver.api('post', '/events/replay');
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toMatch(/dry_run/);
    expect(await chatsUsed()).toBe(used);
    expect((await driver.eventsOf(channel.id)).map((e) => e.status)).toEqual(['replied']);
  });

  it('refuses unknown fields and bad values with 400', async () => {
    const res = await driver.api('post', '/events/replay').send({ dry_run: 'yes' });
    expect(res.status).toBe(400);
    const unknown = await driver.api('post', '/events/replay').send({ colour: 'red' });
    expect(unknown.status).toBe(400);
  });
});

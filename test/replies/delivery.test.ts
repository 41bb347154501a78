import { Webhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDeliveryWorker } from '../../src/deliveries/create-delivery-worker.js';
import { Driver, type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { useReplyReceiver, useTestApp } from '../support/harness.js';

const receiver = useReplyReceiver();
const { app, driver } = useTestApp({
  env: {
    // The receiver listens on loopback: allowed here, refused in the SSRF tests below.
    DELIVERY_ALLOW_PRIVATE: 'true',
    DELIVERY_RETRY_SCHEDULE: '20ms,20ms,20ms',
    DELIVERY_TIMEOUT_MS: '1000',
  },
});
beforeEach(() => {
  receiver.messages.length = 0;
});

type EventBody = Record<string, unknown> & { delivery: Record<string, unknown> | null };

async function channelDeliveringTo(url: string, template = 'Order {{order.id}}') {
  const channel = await driver.createChannel({ template });
  const res = await driver.updateChannel(channel.id, { reply_delivery: { url } });
  expect(res.status).toBe(200);
  const secret = await driver.api('get', `/channels/${channel.id}/reply-secret`);
  receiver.secrets = [secret.body.secret as string];
  return {
    channel: res.body as ChannelJson & { reply_delivery: unknown },
    secret: secret.body.secret as string,
  };
}

/** Sends an event to the channel and lets the worker answer it (echo provider). */
async function finishedEvent(channel: ChannelJson, body: unknown = { order: { id: 1 } }) {
  const res = await driver.sendEvent(channel.webhook_url, body);
  expect(res.status).toBe(200);
  await app.ctx.worker?.runOnce();
  return res.body.event_id as string;
}

const eventOf = async (id: string) => (await driver.api('get', `/events/${id}`)).body as EventBody;

/** Runs the delivery worker until the event's delivery reaches `status`. */
function deliveredAs(eventId: string, status: string) {
  return eventually(
    async () => {
      await app.ctx.deliveryWorker?.runOnce();
      const event = await eventOf(eventId);
      return event.delivery?.status === status ? event : undefined;
    },
    { what: `delivery ${status}` },
  );
}

describe('reply delivery', () => {
  it('POSTs each finished event as a Standard Webhooks message signed with the reply secret', async () => {
    const { channel, secret } = await channelDeliveringTo(receiver.url());
    expect(channel.reply_delivery).toEqual({
      url: receiver.url(),
      enabled: true,
      disabled_reason: null,
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const eventId = await finishedEvent(channel, { order: { id: 42 } });
    const event = await deliveredAs(eventId, 'delivered');
    expect(event.delivery).toEqual({
      status: 'delivered',
      attempts: 1,
      last_status: 200,
      last_error: null,
      delivered_at: expect.stringMatching(/Z$/),
    });

    expect(receiver.messages).toHaveLength(1);
    const [message] = receiver.messages;
    expect(message?.verifiedWith).toEqual([secret]);
    expect(message?.headers['content-type']).toBe('application/json');
    expect(message?.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(
      Math.abs(Number(message?.headers['webhook-timestamp']) - Date.now() / 1000),
    ).toBeLessThan(60);
    const payload = new Webhook(secret).verify(message?.body ?? '', {
      'webhook-id': String(message?.headers['webhook-id']),
      'webhook-timestamp': String(message?.headers['webhook-timestamp']),
      'webhook-signature': String(message?.headers['webhook-signature']),
    }) as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(payload.type).toBe('event.replied');
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    const { delivery: _now, ...asNow } = event;
    const { delivery: _then, ...asSent } = payload.data;
    expect(asSent).toEqual(asNow);
    expect(payload.data.reply).toContain('You wrote: Order 42');
  });

  it('says event.skipped and event.failed for the other endings', async () => {
    const { channel } = await channelDeliveringTo(receiver.url(), '   ');
    const skipped = await finishedEvent(channel);
    await deliveredAs(skipped, 'delivered');
    expect(receiver.messages.map((m) => m.json.type)).toEqual(['event.skipped']);

    // An event whose stored payload cannot be read ends failed without an AI call.
    const { channel: other } = await channelDeliveringTo(receiver.url());
    const res = await driver.sendEvent(other.webhook_url, { order: { id: 1 } });
    await app.ctx.db.query(`update events set payload = 'not json' where id = $1`, [
      res.body.event_id,
    ]);
    await app.ctx.worker?.runOnce();
    await deliveredAs(res.body.event_id as string, 'delivered');
    expect(receiver.messages.map((m) => m.json.type)).toEqual(['event.skipped', 'event.failed']);
    expect(receiver.messages[1]?.json.data.status).toBe('failed');
  });

  it('sends nothing for a channel without a reply URL: delivery is null', async () => {
    const channel = await driver.createChannel();
    const eventId = await finishedEvent(channel);
    expect(await app.ctx.deliveryWorker?.runOnce()).toBe(0);
    expect((await eventOf(eventId)).delivery).toBeNull();
    expect(receiver.messages).toHaveLength(0);
  });

  it('retries a 500 with the same webhook-id and the same body', async () => {
    const { channel } = await channelDeliveringTo(receiver.url());
    receiver.enqueue({ status: 500 });
    const eventId = await finishedEvent(channel);
    const event = await deliveredAs(eventId, 'delivered');
    expect(event.delivery).toMatchObject({ attempts: 2, last_status: 200 });
    const [first, second] = receiver.messages;
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(second?.body).toBe(first?.body);
    expect(second?.verifiedWith).toHaveLength(1);
  });

  it('waits at least as long as a 429 Retry-After asks', async () => {
    const { channel } = await channelDeliveringTo(receiver.url());
    receiver.enqueue({ status: 429, headers: { 'retry-after': '2' } });
    const eventId = await finishedEvent(channel);
    await eventually(
      async () => (await app.ctx.deliveryWorker?.runOnce(), receiver.messages.length === 1),
    );
    const pending = await eventOf(eventId);
    expect(pending.delivery).toMatchObject({ status: 'pending', attempts: 1, last_status: 429 });
    await deliveredAs(eventId, 'delivered');
    const [first, second] = receiver.messages;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_900);
  });

  it('does not follow a redirect: a 301 is a failed attempt', async () => {
    const { channel } = await channelDeliveringTo(receiver.url('/old'));
    receiver.enqueue(
      { status: 301, headers: { location: receiver.url('/new') } },
      { status: 301, headers: { location: receiver.url('/new') } },
      { status: 301, headers: { location: receiver.url('/new') } },
      { status: 301, headers: { location: receiver.url('/new') } },
    );
    const eventId = await finishedEvent(channel);
    const event = await deliveredAs(eventId, 'failed');
    expect(event.delivery).toMatchObject({ attempts: 4, last_status: 301 });
    expect(event.delivery?.last_error).toMatch(/redirect.*not followed/);
    expect(receiver.messages.map((m) => m.path)).toEqual(['/old', '/old', '/old', '/old']);
  });

  it('gives up after the schedule, shows every attempt, and delivers again when asked', async () => {
    const { channel } = await channelDeliveringTo(receiver.url());
    receiver.enqueue({ status: 500 }, { status: 502 }, { status: 503 }, { status: 500 });
    const eventId = await finishedEvent(channel);
    const event = await deliveredAs(eventId, 'failed');
    expect(event.delivery).toMatchObject({ attempts: 4, last_status: 500, delivered_at: null });
    expect((await app.ctx.deliveries.attemptsOf(eventId)).map((a) => a.status)).toEqual([
      500, 502, 503, 500,
    ]);

    await app.ctx.deliveries.deliverAgain(app.ctx.defaultWorkspaceId, eventId);
    const again = await deliveredAs(eventId, 'delivered');
    expect(again.delivery).toMatchObject({ attempts: 5, last_status: 200 });
    expect(new Set(receiver.messages.map((m) => m.headers['webhook-id'])).size).toBe(1);
  });

  it('retries a receiver that hangs past DELIVERY_TIMEOUT_MS or resets the connection', async () => {
    const { channel } = await channelDeliveringTo(receiver.url());
    receiver.enqueue({ hang: true }, { reset: true });
    const eventId = await finishedEvent(channel);
    await eventually(
      async () => (await app.ctx.deliveryWorker?.runOnce(), receiver.messages.length >= 1),
    );
    expect((await eventOf(eventId)).delivery).toMatchObject({
      status: 'pending',
      last_status: null,
      last_error: 'No answer within 1000 ms.',
    });
    const event = await deliveredAs(eventId, 'delivered');
    expect(event.delivery).toMatchObject({ attempts: 3 });
    const attempts = await app.ctx.deliveries.attemptsOf(eventId);
    expect(attempts[1]?.error).toMatch(/ECONNRESET|socket hang up/);
  });

  it('turns delivery off at a 410, holds later events, and sends them all once it is on again', async () => {
    const { channel } = await channelDeliveringTo(receiver.url());
    receiver.enqueue({ status: 410 });
    const first = await finishedEvent(channel);
    await eventually(
      async () => (await app.ctx.deliveryWorker?.runOnce(), receiver.messages.length === 1),
    );
    const off = (await driver.api('get', `/channels/${channel.id}`)).body;
    expect(off.reply_delivery).toEqual({
      url: receiver.url(),
      enabled: false,
      disabled_reason: expect.stringContaining('410'),
    });
    const second = await finishedEvent(channel);
    expect(await app.ctx.deliveryWorker?.runOnce()).toBe(0);
    expect((await eventOf(first)).delivery).toMatchObject({ status: 'held', last_status: 410 });
    expect((await eventOf(second)).delivery).toMatchObject({ status: 'held', attempts: 0 });

    const on = await driver.updateChannel(channel.id, { reply_delivery: { enabled: true } });
    expect(on.body.reply_delivery).toEqual({
      url: receiver.url(),
      enabled: true,
      disabled_reason: null,
    });
    await deliveredAs(first, 'delivered');
    await deliveredAs(second, 'delivered');
    expect(receiver.messages).toHaveLength(3);
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    const { channel, secret: old } = await channelDeliveringTo(receiver.url());
    const rotated = await driver.api('post', `/channels/${channel.id}/reply-secret/rotate`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    expect((await driver.api('get', `/channels/${channel.id}/reply-secret`)).body).toEqual({
      secret: fresh,
    });
    receiver.secrets = [old, fresh];

    await deliveredAs(await finishedEvent(channel), 'delivered');
    expect(receiver.messages[0]?.verifiedWith).toEqual([old, fresh]);
    expect(String(receiver.messages[0]?.headers['webhook-signature']).split(' ')).toHaveLength(2);

    // 24 hours later (the overlap's end moved to the past rather than waiting for it).
    await app.ctx.db.query(
      `update channels set reply_previous_until = now() - interval '1 second' where id = $1`,
      [channel.id],
    );
    await deliveredAs(await finishedEvent(channel), 'delivered');
    expect(receiver.messages[1]?.verifiedWith).toEqual([fresh]);
  });
});

describe('reply delivery settings', () => {
  it('merges a PATCH into reply_delivery', async () => {
    const channel = await driver.createChannel();
    expect((await driver.api('get', `/channels/${channel.id}`)).body.reply_delivery).toEqual({
      url: null,
      enabled: true,
      disabled_reason: null,
    });
    const off = await driver.updateChannel(channel.id, { reply_delivery: { enabled: false } });
    expect(off.body.reply_delivery).toEqual({ url: null, enabled: false, disabled_reason: null });
    const url = await driver.updateChannel(channel.id, { reply_delivery: { url: receiver.url() } });
    expect(url.body.reply_delivery).toEqual({
      url: receiver.url(),
      enabled: false,
      disabled_reason: null,
    });
    const other = await driver.updateChannel(channel.id, { name: 'Renamed' });
    expect(other.body.reply_delivery).toEqual(url.body.reply_delivery);
    const none = await driver.updateChannel(channel.id, { reply_delivery: { url: null } });
    expect(none.body.reply_delivery).toEqual({ url: null, enabled: false, disabled_reason: null });
  });

  it('refuses URLs that are not http(s) or too long, and unknown members', async () => {
    const channel = await driver.createChannel();
    for (const reply_delivery of [
      { url: 'ftp://example.com/x' },
      { url: 'not a url' },
      { url: `https://example.com/${'x'.repeat(2000)}` },
      { url: 'https://example.com/', secret: 'x' },
      { enabled: 'yes' },
    ]) {
      const res = await driver.updateChannel(channel.id, { reply_delivery });
      expect(res.status, JSON.stringify(reply_delivery)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('answers 404 for the reply secret of an unknown channel', async () => {
    expect((await driver.api('get', '/channels/999999/reply-secret')).status).toBe(404);
    expect((await driver.api('post', '/channels/abc/reply-secret/rotate')).status).toBe(404);
  });
});

describe('with DELIVERY_ALLOW_PRIVATE off', () => {
  const { driver: strictDriver } = useTestApp({ env: { DELIVERY_RETRY_SCHEDULE: '20ms' } });

  it('refuses a reply URL that leads to loopback, private or link-local addresses (400)', async () => {
    const channel = await strictDriver.createChannel();
    for (const url of [
      receiver.url('/replies', 'localhost'),
      'http://127.0.0.1/x',
      'http://10.0.0.8/x',
      'http://192.168.1.1/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x',
      'http://[fd00::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://0.0.0.0/x',
    ]) {
      const res = await strictDriver.updateChannel(channel.id, { reply_delivery: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.detail).toMatch(/reply_delivery\.url: refused/);
    }
    const created = await strictDriver.api('post', '/channels').send({
      name: 'x',
      template: 'y',
      reply_delivery: { url: 'http://127.0.0.1:9/' },
    });
    expect(created.status).toBe(400);
    const publicUrl = await strictDriver.updateChannel(channel.id, {
      reply_delivery: { url: 'https://203.0.113.7.nip.invalid/hooks' },
    });
    expect(publicUrl.status).toBe(200);
  });

  it('refuses at connect time a host that resolves to 127.0.0.1 (no request is made)', async () => {
    // Saved by a process that allows private addresses; sent by one that does not.
    const lenient = new Driver(app);
    const channel = await lenient.createChannel();
    const url = receiver.url('/replies', 'localhost');
    expect((await lenient.updateChannel(channel.id, { reply_delivery: { url } })).status).toBe(200);
    const eventId = await finishedEvent(channel);
    const guarded = createDeliveryWorker(app.ctx, { allowPrivate: false });
    expect(await guarded.runOnce()).toBe(1);
    const event = await eventOf(eventId);
    expect(event.delivery).toMatchObject({ status: 'failed', attempts: 1, last_status: null });
    expect(event.delivery?.last_error).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
    // what Brain Logs shows says how to allow a receiver on the same machine
    expect(event.delivery?.last_error).toContain('DELIVERY_ALLOW_PRIVATE=true');
    expect(receiver.messages).toHaveLength(0);
  });
});

import { describe, expect, it, vi } from 'vitest';
import { createDeliveryWorker } from '../../src/deliveries/create-delivery-worker.js';
import { useTestApp } from '../support/harness.js';

// A name whose DNS answer is an IPv4-compatible IPv6 address (::/96) wrapping 127.0.0.1; every
// other name resolves as usual.
vi.mock('node:dns', async (importOriginal) => {
  const dns = await importOriginal<typeof import('node:dns')>();
  const lookup = ((hostname: string, options: unknown, callback: unknown) => {
    if (hostname !== 'compat.hookprompt.test')
      return (dns.lookup as (...args: unknown[]) => void)(hostname, options, callback);
    const answer = [{ address: '::7f00:1', family: 6 }];
    const all = typeof options === 'object' && (options as { all?: boolean }).all;
    const done = callback as (...args: unknown[]) => void;
    process.nextTick(() => (all ? done(null, answer) : done(null, '::7f00:1', 6)));
  }) as typeof dns.lookup;
  return { ...dns, lookup, default: { ...dns, lookup } };
});

// Two apps: one with the default (strict) reply URL checks, one that allows private addresses.
const strict = useTestApp();
const lenient = useTestApp({
  env: { DELIVERY_ALLOW_PRIVATE: 'true', DELIVERY_RETRY_SCHEDULE: '20ms' },
});

describe('IPv4-compatible IPv6 addresses (::/96) as reply URLs', () => {
  it('refuses them when a reply URL is saved (400), written as an address or behind a name', async () => {
    const driver = strict.driver;
    const channel = await driver.createChannel();
    for (const url of [
      'http://[::7f00:1]/x',
      'http://[::127.0.0.1]/x',
      'http://[::a9fe:a9fe]/latest/meta-data',
      'http://[::8.8.8.8]/x',
      'http://[0:0:0:0:0:0:0a00:8]/x',
      'http://compat.hookprompt.test/x',
    ]) {
      const res = await driver.updateChannel(channel.id, { reply_delivery: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.detail).toMatch(/reply_delivery\.url: refused/);
    }
    const res = await driver.updateChannel(channel.id, {
      reply_delivery: { url: 'http://[::ffff:8.8.8.8]/x' },
    });
    expect(res.status, 'an IPv4-mapped public address').toBe(200);
  });

  it.each([
    ['written as an address', 'http://[::7f00:1]:9/replies', /::7f00:1 is a loopback, private/],
    [
      'behind a name',
      'http://compat.hookprompt.test:9/replies',
      /compat\.hookprompt\.test resolves to ::7f00:1/,
    ],
  ])('refuses them at connect time, %s: nothing is sent', async (_, url, reason) => {
    // Saved by a process that allows private addresses; sent by one that does not.
    const driver = lenient.driver;
    const channel = await driver.createChannel();
    expect((await driver.updateChannel(channel.id, { reply_delivery: { url } })).status).toBe(200);
    const sent = await driver.sendEvent(channel.webhook_url);
    await lenient.app.ctx.worker?.runOnce();
    const guarded = createDeliveryWorker(lenient.app.ctx, { allowPrivate: false });
    expect(await guarded.runOnce()).toBe(1);
    const event = await driver.api('get', `/events/${sent.body.event_id as string}`);
    expect(event.body.delivery).toMatchObject({ status: 'failed', attempts: 1, last_status: null });
    expect(event.body.delivery.last_error).toMatch(reason);
  });
});

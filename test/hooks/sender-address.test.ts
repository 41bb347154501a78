import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/harness.js';

// Behind a proxy: the sender is the address X-Forwarded-For names.
const { app, driver } = useTestApp({ env: { TRUST_PROXY: 'true' } });

const from = (ip: string) => ({ headers: { 'X-Forwarded-For': ip } });

describe('allowed_ips', () => {
  it('lets in senders inside a listed IP or CIDR range, v4 and v6, and refuses others with 403 sender_not_allowed', async () => {
    const channel = await driver.createChannel({
      allowed_ips: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'],
    });
    expect(channel).toMatchObject({
      allowed_ips: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'],
    });
    for (const ip of ['203.0.113.9', '2001:db8:5::1', '198.51.100.7']) {
      expect((await driver.sendEvent(channel.webhook_url, undefined, from(ip))).status, ip).toBe(
        200,
      );
    }
    for (const ip of ['203.0.114.9', '2001:db9::1', '198.51.100.8', '127.0.0.1']) {
      const res = await driver.sendEvent(channel.webhook_url, undefined, from(ip));
      expect(res.status, ip).toBe(403);
      expect(res.body).toMatchObject({ code: 'sender_not_allowed' });
    }
    const events = await driver.api('get', `/events?channel_id=${channel.id}&limit=10`);
    const rejected = (events.body.data as { status: string; error: string; sender_ip: string }[])
      .filter((e) => e.status === 'rejected')
      .map((e) => [e.error, e.sender_ip]);
    expect(rejected.sort()).toEqual(
      [
        ['sender_not_allowed', '127.0.0.1'],
        ['sender_not_allowed', '198.51.100.8'],
        ['sender_not_allowed', '2001:db9::1'],
        ['sender_not_allowed', '203.0.114.9'],
      ].sort(),
    );
  });

  it('comes after the disabled check and before the size check', async () => {
    const channel = await driver.createChannel({ allowed_ips: ['10.0.0.0/8'] });
    const huge = JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) });
    expect((await driver.sendEvent(channel.webhook_url, huge, from('192.0.2.1'))).status).toBe(403);
    await driver.updateChannel(channel.id, { enabled: false }).expect(200);
    const res = await driver.sendEvent(channel.webhook_url, undefined, from('192.0.2.1'));
    expect(res.body.code).toBe('channel_disabled');
  });

  it('refuses entries that are not addresses or ranges, and an empty list lets everyone in again', async () => {
    const channel = await driver.createChannel({ allowed_ips: ['10.0.0.0/8'] });
    for (const allowed_ips of [['example.com'], ['10.0.0.0/33'], 'all']) {
      const res = await driver.updateChannel(channel.id, { allowed_ips });
      expect(res.status, JSON.stringify(allowed_ips)).toBe(400);
      expect(res.body.detail).toMatch(/^allowed_ips/);
    }
    await driver.updateChannel(channel.id, { allowed_ips: [] }).expect(200);
    expect((await driver.sendEvent(channel.webhook_url, undefined, from('192.0.2.1'))).status).toBe(
      200,
    );
  });
});

describe('request headers and sender address on events', () => {
  it('keeps headers with lower-case names, credentials redacted, and the sender address', async () => {
    const channel = await driver.createChannel();
    const res = await driver.sendEvent(channel.webhook_url, undefined, {
      headers: {
        'X-Forwarded-For': '192.0.2.33',
        'X-Request-Id': 'req-1',
        Authorization: 'Bearer sender-credential-1',
        Cookie: 'session=sender-credential-2',
        'Proxy-Authorization': 'Basic sender-credential-3',
        'X-Api-Key': 'sender-credential-4',
      },
    });
    expect(res.status).toBe(200);
    const event = await driver.api('get', `/events/${res.body.event_id}`).expect(200);
    expect(event.body.sender_ip).toBe('192.0.2.33');
    expect(event.body.headers).toMatchObject({
      'x-request-id': 'req-1',
      'content-type': 'application/json',
      authorization: '[redacted]',
      cookie: '[redacted]',
      'proxy-authorization': '[redacted]',
      'x-api-key': '[redacted]',
    });
    expect(event.text).not.toMatch(/sender-credential/);
    expect(app.logText()).not.toMatch(/sender-credential/);
  });
});

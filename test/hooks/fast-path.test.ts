import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { beforeAll, describe, expect, it } from 'vitest';
import { webhookFastPath } from '../../src/hooks/hook-fast-path.js';
import type { HookRequest, WebhookReceiver } from '../../src/hooks/webhook-receiver.js';
import { type ChannelJson, type HookResponse } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

// POST /hooks/<token> is answered before Express (src/hooks/hook-fast-path.ts); other spellings
// of the same URL go through the Express route to the same receiver. Senders must not be able
// to tell which way their request went.

const { app, driver } = useTestApp({ env: { BODY_LIMIT: '2kb', RATE_LIMIT_PER_CHANNEL: '1000' } });
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel({ template: 'Order {{order.id}}' });
});

const tokenOf = (url: string) => new URL(url).pathname.split('/').pop() as string;

/** The same webhook URL, spelled so that only Express's router takes it. */
const throughExpress = (url: string) => url.replace('/hooks/', '/HOOKS/');

/** Status, headers and body, with what differs from one request to the next left out. */
function comparable(res: HookResponse) {
  const headers = Object.fromEntries(
    [...res.headers].filter(([name]) => !['date', 'content-length'].includes(name)),
  );
  return {
    status: res.status,
    headers: {
      ...headers,
      ratelimit: headers.ratelimit?.replace(/r=\d+; t=\d+/g, 'r=R; t=T'),
    },
    body: { ...res.body, event_id: res.body.event_id && 'ID' },
  };
}

describe('which requests the fast path takes', () => {
  const served: Omit<HookRequest, 'req' | 'res'>[] = [];
  const receiver = { serve: async (hook: HookRequest) => void served.push(hook) };
  const takes = webhookFastPath(receiver as unknown as WebhookReceiver, {
    trustProxy: (_address, hop) => hop === 0,
    parseQuery,
  });
  const request = (method: string, url: string, headers = {}) =>
    ({ method, url, headers, socket: { remoteAddress: '127.0.0.1' } }) as IncomingMessage;

  it.each([
    ['POST', '/hooks/abc-DEF_123', 'abc-DEF_123'],
    ['POST', '/hooks/abc/', 'abc'],
    ['POST', '/hooks/abc?wait=3', 'abc'],
    ['POST', '/hooks/abc/?wait=3', 'abc'],
  ])('%s %s: the receiver, token %s', (method, url, token) => {
    served.length = 0;
    expect(takes(request(method, url), {} as ServerResponse)).toBe(true);
    expect(served).toMatchObject([{ token, senderIp: '127.0.0.1' }]);
  });

  it.each([
    ['PUT', '/hooks/abc'],
    ['HEAD', '/hooks/abc'],
    ['GET', '/hooks/abc/events/1'],
    ['POST', '/hooks/abc/events/1'],
    ['POST', '/hooks/'],
    ['POST', '/hooks'],
    ['POST', '/HOOKS/abc'],
    ['POST', '//hooks/abc'],
    ['POST', '/hooks/%41bc'],
    ['POST', '/api/v1/channels'],
  ])('%s %s: left to Express', (method, url) => {
    served.length = 0;
    expect(takes(request(method, url), {} as ServerResponse)).toBe(false);
    expect(served).toEqual([]);
  });

  it('reads the query and the sender as Express would', () => {
    served.length = 0;
    takes(
      request('POST', '/hooks/abc?wait=1&wait=2', { 'x-forwarded-for': '203.0.113.7' }),
      {} as ServerResponse,
    );
    expect(served).toMatchObject([{ query: { wait: ['1', '2'] }, senderIp: '203.0.113.7' }]);
  });
});

describe('the fast path and the Express route answer alike', () => {
  const requests: [string, unknown, Record<string, string>?][] = [
    ['an accepted event', { order: { id: 1 } }],
    ['a payload that is not an object', '[1]'],
    ['a body that is not JSON', '{"order":'],
    ['a GitHub form', 'payload=%7B%7D', { 'Content-Type': 'application/x-www-form-urlencoded' }],
    ['a body over BODY_LIMIT', { pad: 'x'.repeat(3000) }],
    ['an unknown encoding', { order: { id: 1 } }, { 'Content-Encoding': 'zstd' }],
  ];
  it.each(requests)('%s', async (_name, body, headers = {}) => {
    const send = (url: string) =>
      driver.sendEvent(url, body, {
        contentType: headers['Content-Type'] ?? 'application/json',
        headers,
      });
    const fast = await send(channel.webhook_url);
    const routed = await send(throughExpress(channel.webhook_url));
    expect(comparable(fast)).toEqual(comparable(routed));
    expect(fast.headers.get('ratelimit')).toMatch(/^"sender"; r=\d+; t=\d+, "channel"/);
  });

  it('an unknown token: 404 with the sender limit only', async () => {
    const unknown = `${app.baseUrl}/hooks/${'x'.repeat(32)}`;
    const fast = await driver.sendEvent(unknown);
    expect(fast.status).toBe(404);
    expect(fast.body.code).toBe('channel_not_found');
    expect(comparable(fast)).toEqual(comparable(await driver.sendEvent(throughExpress(unknown))));
    expect(fast.headers.get('ratelimit')).toMatch(/^"sender"; r=\d+; t=\d+$/);
  });
});

describe('POST /hooks/<token> variants', () => {
  it('?wait=N holds the answer until the event is replied', async () => {
    const answer = driver.sendEvent(`${channel.webhook_url}?wait=5`, { order: { id: 7 } });
    let settled = false;
    void answer.finally(() => (settled = true));
    while (!settled) {
      await app.ctx.worker?.runOnce();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'replied',
      reply: expect.stringContaining('Order 7'),
    });
  });

  it('an invalid ?wait is refused after both rate limits and kept as a rejected event', async () => {
    const res = await driver.sendEvent(`${channel.webhook_url}?wait=soon`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_wait');
    expect(res.headers.get('ratelimit')).toMatch(/"sender".*"channel"/);
    const [event] = (await driver.eventsOf(channel.id)).slice(-1);
    expect(event).toMatchObject({ status: 'rejected', error: 'invalid_wait' });
  });

  it('a trailing slash, with or without a query string, is the same URL', async () => {
    for (const url of [`${channel.webhook_url}/`, `${channel.webhook_url}/?source=test`]) {
      const res = await driver.sendEvent(url, { order: { id: 8 } });
      expect(res.status, url).toBe(200);
      expect(res.body).toEqual({ status: 'received', event_id: expect.any(String) });
    }
  });

  it('a percent-encoded token reaches the same channel (decoded by Express)', async () => {
    const token = tokenOf(channel.webhook_url);
    const encoded = `${app.baseUrl}/hooks/%${token.charCodeAt(0).toString(16)}${token.slice(1)}`;
    expect((await driver.sendEvent(encoded)).status).toBe(200);
  });

  it('HEAD, PUT and GET are 405 with Allow: POST and no rate-limit headers', async () => {
    for (const method of ['HEAD', 'PUT', 'GET']) {
      const res = await fetch(channel.webhook_url, {
        method,
        body: method === 'PUT' ? '{}' : undefined,
      });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('ratelimit')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = await res.text();
      if (method === 'HEAD') expect(body).toBe('');
      else expect(JSON.parse(body)).toMatchObject({ status: 405, code: 'method_not_allowed' });
    }
  });

  it('counts refusals in the metrics by code, whichever way they came', async () => {
    const metric = async () => {
      const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
      return Number(
        /hookprompt_events_rejected_total\{code="payload_not_object"\} (\d+)/.exec(text)?.[1] ?? 0,
      );
    };
    const before = await metric();
    await driver.sendEvent(channel.webhook_url, '[1]');
    await driver.sendEvent(throughExpress(channel.webhook_url), '[1]');
    expect(await metric()).toBe(before + 2);
  });
});

describe('request log', () => {
  it('logs a fast-path webhook once, token redacted, with its event id and no payload', async () => {
    const token = tokenOf(channel.webhook_url);
    await driver.sendEvent(`${channel.webhook_url}?wait=later`, { note: 'not-logged' });
    const lines = app.logs.filter(
      (line) => (line.req as { url?: string } | undefined)?.url === '/hooks/[redacted]?wait=later',
    );
    expect(lines).toHaveLength(1);
    // A refused request of a known channel is kept as a rejected event: the log names it.
    expect(lines[0]).toMatchObject({
      level: 30,
      res: { statusCode: 400 },
      eventId: expect.stringMatching(/^\d+$/),
      req: { method: 'POST', remoteAddress: expect.stringContaining('127.0.0.1') },
    });
    expect(app.logText()).not.toContain(token);
    expect(app.logText()).not.toContain('not-logged');
  });
});

describe('behind a proxy (TRUST_PROXY=true)', () => {
  const { driver: proxiedDriver } = useTestApp({
    env: { TRUST_PROXY: 'true', RATE_LIMIT_PER_IP: '2' },
  });

  const from = (ip: string) => ({ headers: { 'X-Forwarded-For': ip } });

  it('takes the sender from X-Forwarded-For, for its event and its rate limit', async () => {
    const target = await proxiedDriver.createChannel();
    const send = (ip: string) => proxiedDriver.sendEvent(target.webhook_url, undefined, from(ip));
    expect((await send('203.0.113.1')).status).toBe(200);
    expect((await send('203.0.113.1')).status).toBe(200);
    expect((await send('203.0.113.1')).status).toBe(429);
    // another sender behind the same proxy has a count of its own
    const other = await send('198.51.100.2');
    expect(other.status).toBe(200);
    const events = await proxiedDriver.api('get', `/events?channel_id=${target.id}&limit=10`);
    const senders = (events.body.data as { sender_ip: string }[]).map((e) => e.sender_ip);
    expect(senders.sort()).toEqual(['198.51.100.2', '203.0.113.1', '203.0.113.1']);
  });

  it('without TRUST_PROXY the header is ignored', async () => {
    const res = await driver.sendEvent(channel.webhook_url, undefined, from('203.0.113.9'));
    expect(res.status).toBe(200);
    const events = await driver.api('get', `/events?channel_id=${channel.id}&limit=1`);
    expect(events.body.data[0].sender_ip).toMatch(/127\.0\.0\.1/);
  });
});

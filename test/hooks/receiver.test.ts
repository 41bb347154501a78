import { beforeAll, describe, expect, it } from 'vitest';
import { Driver, type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';
import { startTestApp } from '../support/test-app.js';

// Two tests start an app of their own besides: one with a larger BODY_LIMIT, one on a fresh
// workspace whose chat count starts at zero.
const { app, driver } = useTestApp({ env: { BODY_LIMIT: '2kb' } });

const newChannel = (input: Parameters<Driver['createChannel']>[0] = {}) =>
  driver.createChannel(input);

function expectProblem(
  res: { status: number; headers: Headers; body: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    status,
    code,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  });
}

describe('POST /hooks/:token', () => {
  it('answers 200 with the event id once the event is stored as pending', async () => {
    const channel = await newChannel();
    const res = await driver.sendEvent(
      channel.webhook_url,
      '{"order":{"id":9007199254740993,"total":1.50}}',
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'received', event_id: expect.any(String) });
    const [event] = await driver.eventsOf(channel.id);
    expect(event).toMatchObject({ id: res.body.event_id, status: 'pending', attempts: 0 });
    // the body is kept exactly as received: number text and spacing survive
    expect(event?.payload).toBe('{"order":{"id":9007199254740993,"total":1.50}}');
  });

  it('accepts application/*+json and a body with no Content-Type at all', async () => {
    const channel = await newChannel();
    expect(
      (
        await driver.sendEvent(
          channel.webhook_url,
          { a: 1 },
          { contentType: 'application/vnd.shop+json' },
        )
      ).status,
    ).toBe(200);
    expect(
      (await driver.sendEvent(channel.webhook_url, { a: 2 }, { contentType: null })).status,
    ).toBe(200);
    expect(
      (
        await driver.sendEvent(
          channel.webhook_url,
          { a: 3 },
          { contentType: 'application/json; charset=utf-8' },
        )
      ).status,
    ).toBe(200);
    expect(await driver.eventsOf(channel.id)).toHaveLength(3);
  });

  it('stores a payload containing \\u0000 and lone surrogates like any other', async () => {
    const channel = await newChannel();
    const body = '{"note":"a\\u0000b","odd":"\\ud800","k":1,"k":2}';
    const res = await driver.sendEvent(channel.webhook_url, body);
    expect(res.status).toBe(200);
    expect((await driver.eventsOf(channel.id))[0]?.payload).toBe(body);
  });

  it('stores any text byte for byte: non-ASCII, escapes and white space between tokens', async () => {
    const channel = await newChannel();
    const body =
      '{\n\t"name": "Zoë 😀 中文",\r\n  "quote": "a\\"b\\\\c\\/\\u00e9",\n  "n": -0.0e+0 }\n';
    const res = await driver.sendEvent(channel.webhook_url, body);
    expect(res.status).toBe(200);
    expect((await driver.eventsOf(channel.id))[0]?.payload).toBe(body);
  });

  it('answers 404 channel_not_found for an unknown, malformed or missing token, and records nothing', async () => {
    const countEvents = async () =>
      (await app.ctx.db.query<{ n: string }>('select count(*)::text as n from events')).rows[0]?.n;
    const before = await countEvents();
    for (const path of [
      '/hooks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      '/hooks/..%2F..%2Fetc',
      `/hooks/${'x'.repeat(5000)}`,
      '/hooks',
    ]) {
      expectProblem(await driver.sendEvent(`${app.baseUrl}${path}`), 404, 'channel_not_found');
    }
    expect(await countEvents()).toBe(before);
  });

  it('answers 405 with Allow: POST for other methods', async () => {
    const channel = await newChannel();
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await driver.sendEvent(channel.webhook_url, '{}', { method });
      if (method === 'GET') expect(res.status).toBe(405);
      else expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('answers 403 channel_disabled for a disabled channel and records the refusal', async () => {
    const channel = await newChannel({ enabled: false });
    expectProblem(
      await driver.sendEvent(channel.webhook_url, { hello: 'world' }),
      403,
      'channel_disabled',
    );
    const [event] = await driver.eventsOf(channel.id);
    expect(event).toMatchObject({
      status: 'rejected',
      error: 'channel_disabled',
      payload: '{"hello":"world"}',
    });

    await driver.updateChannel(channel.id, { enabled: true }).expect(200);
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
  });

  it('answers 415 for form-urlencoded, text and multipart bodies and records them as rejected', async () => {
    const channel = await newChannel();
    const cases: [string, string][] = [
      ['application/x-www-form-urlencoded', 'order=1&total=2'],
      ['text/plain', '{"a":1}'],
      ['multipart/form-data; boundary=x', '--x\r\n\r\nhi\r\n--x--'],
      ['application/xml', '<a/>'],
      ['not a media type', '{}'],
    ];
    for (const [type, body] of cases) {
      expectProblem(
        await driver.sendEvent(channel.webhook_url, body, { contentType: type }),
        415,
        'unsupported_media_type',
      );
    }
    const events = await driver.eventsOf(channel.id);
    expect(events.map((e) => [e.status, e.error])).toEqual(
      cases.map(() => ['rejected', 'unsupported_media_type']),
    );
    expect(events[0]?.payload).toBe('order=1&total=2');
  });

  it('answers 400 invalid_json for malformed JSON, invalid UTF-8 and nesting deeper than 1000', async () => {
    const channel = await newChannel();
    const bodies: (string | Uint8Array)[] = [
      '{"a":',
      "{'a':1}",
      '{"a":1,}',
      '',
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    ];
    for (const body of bodies) {
      expectProblem(await driver.sendEvent(channel.webhook_url, body), 400, 'invalid_json');
    }
    const app2 = await startTestApp({ env: { BODY_LIMIT: '1mb' } });
    try {
      const deepChannel = await new Driver(app2).createChannel();
      const tooDeep = `${'['.repeat(1001)}${']'.repeat(1001)}`;
      expectProblem(
        await driver.sendEvent(deepChannel.webhook_url, `{"a":${tooDeep}}`),
        400,
        'invalid_json',
      );
      expectProblem(
        await driver.sendEvent(deepChannel.webhook_url, '['.repeat(100_000)),
        400,
        'invalid_json',
      );
      const deepEnough = `{"a":${'['.repeat(999)}${']'.repeat(999)}}`;
      expect((await driver.sendEvent(deepChannel.webhook_url, deepEnough)).status).toBe(200);
    } finally {
      await app2.close();
    }
    const events = await driver.eventsOf(channel.id);
    expect(events).toHaveLength(bodies.length);
    expect(events.every((e) => e.status === 'rejected' && e.error === 'invalid_json')).toBe(true);
  });

  it('answers 400 payload_not_object for valid JSON that is not an object', async () => {
    const channel = await newChannel();
    for (const body of ['[1,2]', '"text"', '42', 'null', 'true']) {
      expectProblem(await driver.sendEvent(channel.webhook_url, body), 400, 'payload_not_object');
    }
  });

  it('answers 413 payload_too_large past BODY_LIMIT and keeps the body (up to 64 KB)', async () => {
    const channel = await newChannel();
    const atLimit = JSON.stringify({ pad: 'x'.repeat(2048 - 10) });
    expect(Buffer.byteLength(atLimit)).toBe(2048);
    expect((await driver.sendEvent(channel.webhook_url, atLimit)).status).toBe(200);
    const overLimit = JSON.stringify({ pad: 'x'.repeat(2048 - 9) });
    expectProblem(await driver.sendEvent(channel.webhook_url, overLimit), 413, 'payload_too_large');
    const rejected = (await driver.eventsOf(channel.id)).find((e) => e.status === 'rejected');
    expect(rejected?.error).toBe('payload_too_large');
    expect(rejected?.payload).toBe(overLimit);
    const shown = await driver.api('get', `/events/${rejected?.id}`).expect(200);
    expect(shown.body).toMatchObject({ payload: overLimit, payload_truncated: false });
  });

  it('checks the disabled channel before the body: a disabled channel answers 403 even to a bad body', async () => {
    const channel = await newChannel({ enabled: false });
    expectProblem(
      await driver.sendEvent(channel.webhook_url, 'a=1', {
        contentType: 'application/x-www-form-urlencoded',
      }),
      403,
      'channel_disabled',
    );
  });
});

describe('workspace chat quota', () => {
  it('accepts exactly the chats left when 50 requests race for 20', async () => {
    const quotaApp = await startTestApp();
    try {
      const quotaDriver = new Driver(quotaApp);
      const channel = await quotaDriver.createChannel();
      await quotaDriver.setWorkspace({ chat_quota: 25 }).expect(200);
      for (let i = 0; i < 5; i++)
        expect((await quotaDriver.sendEvent(channel.webhook_url)).status).toBe(200);

      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => quotaDriver.sendEvent(channel.webhook_url, { i })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.filter((s) => s === 403)).toHaveLength(30);
      for (const res of results.filter((r) => r.status === 403))
        expect(res.body.code).toBe('quota_exceeded');

      const workspace = await quotaDriver.api('get', '/workspace').expect(200);
      expect(workspace.body).toMatchObject({ chat_quota: 25, chats_used: 25 });
      const events = await quotaDriver.eventsOf(channel.id);
      expect(events.filter((e) => e.status === 'pending')).toHaveLength(25);
      expect(
        events.filter((e) => e.status === 'rejected' && e.error === 'quota_exceeded'),
      ).toHaveLength(30);

      // an admin resets usage: requests are accepted again
      await quotaDriver.setWorkspace({ chats_used: 0 }).expect(200);
      expect((await quotaDriver.sendEvent(channel.webhook_url)).status).toBe(200);
    } finally {
      await quotaApp.close();
    }
  });

  it('says when the quota starts again and how large it is', async () => {
    const channel = await newChannel();
    await driver.setWorkspace({ chat_quota: 1, chats_used: 0 }).expect(200);
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    const res = await driver.sendEvent(channel.webhook_url);
    expectProblem(res, 403, 'quota_exceeded');
    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(res.body).toMatchObject({ chat_quota: 1, resets_at: nextMonth.toISOString() });
    expect(res.body.detail).toContain(nextMonth.toISOString());
    const workspace = await driver.api('get', '/workspace').expect(200);
    expect(res.body.resets_at).toBe(workspace.body.quota_resets_at);
    await driver.setWorkspace({ chat_quota: 1000, chats_used: 0 }).expect(200);
  });

  it('starts counting again when a calendar month begins', async () => {
    const channel = await newChannel();
    await driver.setWorkspace({ chat_quota: 1, chats_used: 0 }).expect(200);
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    expect((await driver.sendEvent(channel.webhook_url)).body.code).toBe('quota_exceeded');
    // the usage was counted last month
    await app.ctx.db.query(
      `update workspaces set quota_period_start = quota_period_start - interval '1 month'`,
    );
    expect((await driver.api('get', '/workspace')).body.chats_used).toBe(0);
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    expect((await driver.api('get', '/workspace')).body.chats_used).toBe(1);
    await driver.setWorkspace({ chat_quota: 1000 }).expect(200);
  });
});

describe('channel lifecycle as senders see it', () => {
  let channel: ChannelJson;
  beforeAll(async () => {
    channel = await newChannel({ template: 'Hi {{name}}' });
  });

  it('regenerating the URL makes the old one 404 at once and keeps every setting', async () => {
    const res = await driver.api('post', `/channels/${channel.id}/regenerate-url`).expect(200);
    expect(res.body.webhook_url).not.toBe(channel.webhook_url);
    expect(res.body).toMatchObject({
      id: channel.id,
      name: channel.name,
      template: 'Hi {{name}}',
      enabled: true,
    });
    expectProblem(await driver.sendEvent(channel.webhook_url), 404, 'channel_not_found');
    expect((await driver.sendEvent(res.body.webhook_url)).status).toBe(200);
    channel = res.body;
  });

  it('deleting the channel makes its URL 404 while its past events stay stored', async () => {
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(200);
    await driver.api('delete', `/channels/${channel.id}`).expect(204);
    expectProblem(await driver.sendEvent(channel.webhook_url), 404, 'channel_not_found');
    expect((await driver.eventsOf(channel.id)).length).toBeGreaterThan(0);
    await driver.api('get', `/channels/${channel.id}`).expect(404);
  });
});

describe('logging', () => {
  it('logs one line per request with the webhook token redacted and no payload', async () => {
    const channel = await newChannel();
    const token = new URL(channel.webhook_url).pathname.split('/').pop() as string;
    await driver.sendEvent(channel.webhook_url, { secret_field: 'do-not-log-me' });
    const text = app.logText();
    expect(text).not.toContain(token);
    expect(text).not.toContain('do-not-log-me');
    const hookLines = app.logs.filter(
      (line) => (line.req as { url?: string } | undefined)?.url === '/hooks/[redacted]',
    );
    expect(hookLines.length).toBeGreaterThan(0);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { eventually } from '../support/eventually.js';
import { fakeReplyTo } from '../support/fake-ai-server.js';
import { useTestApp } from '../support/harness.js';

// The fake AI server is reset after each test (useTestApp's `ai: true`).
const { app, driver, ai } = useTestApp({
  ai: true,
  env: { AI_MAX_ATTEMPTS: '1', SYNC_WAIT_MAX_S: '3', WORKER_POLL_INTERVAL_MS: '50' },
});
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel({ template: 'Order {{order.id}}' });
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    headers: res.headers,
  };
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, { headers });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    headers: res.headers,
  };
}

/** Lets the worker answer events as they come until `answer` settles (tests drive the worker). */
async function answeredByWorker<T>(answer: Promise<T>): Promise<T> {
  let settled = false;
  const result = answer.finally(() => (settled = true));
  while (!settled) {
    await app.ctx.worker?.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return result;
}

const pendingEventsOf = async (channelId: string) =>
  (await driver.eventsOf(channelId)).filter((event) => event.status === 'pending');

describe('the webhook answer', () => {
  it('answers received at once without waiting, the event left pending', async () => {
    const res = await post(channel.webhook_url, { order: { id: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'received', event_id: expect.any(String) });
  });

  it('holds ?wait=N until the event is replied, then answers with the reply', async () => {
    const res = await answeredByWorker(post(`${channel.webhook_url}?wait=3`, { order: { id: 2 } }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'replied',
      event_id: expect.any(String),
      reply: fakeReplyTo('Order 2'),
    });
  });

  it('takes the wait from Prefer: wait=N (RFC 7240) as well', async () => {
    const res = await answeredByWorker(
      post(channel.webhook_url, { order: { id: 3 } }, { prefer: 'respond-async, wait=3' }),
    );
    expect(res.body).toMatchObject({ status: 'replied', reply: fakeReplyTo('Order 3') });
    expect(res.headers.get('preference-applied')).toBe('wait=3');
  });

  it('says with Preference-Applied how long it honoured Prefer: wait, after clamping', async () => {
    const quiet = await driver.createChannel();
    const clamped = await post(quiet.webhook_url, { order: { id: 8 } }, { prefer: 'wait=600' });
    expect(clamped.body).toEqual({ status: 'received', event_id: expect.any(String) });
    expect(clamped.headers.get('preference-applied')).toBe('wait=3');
    const url = `${quiet.webhook_url}/events/${clamped.body.event_id as string}`;
    expect((await get(url, { prefer: 'wait=1' })).headers.get('preference-applied')).toBe('wait=1');
    // nothing honoured, nothing applied: no preference, or ?wait= instead
    expect((await get(url)).headers.get('preference-applied')).toBeNull();
    const byQuery = await post(`${quiet.webhook_url}?wait=1`, { order: { id: 9 } });
    expect(byQuery.headers.get('preference-applied')).toBeNull();
  });

  it('answers skipped for an empty prompt, and failed with the error', async () => {
    const empty = await driver.createChannel({ template: '  ' });
    const skipped = await answeredByWorker(post(`${empty.webhook_url}?wait=3`, { a: 1 }));
    expect(skipped.body).toEqual({ status: 'skipped', event_id: expect.any(String) });

    ai.enqueue({ status: 400, body: { error: { message: 'model says no' } } });
    const failed = await answeredByWorker(
      post(`${channel.webhook_url}?wait=3`, { order: { id: 4 } }),
    );
    expect(failed.body).toEqual({
      status: 'failed',
      event_id: expect.any(String),
      error: expect.stringContaining('model says no'),
    });
  });

  it('answers received when the event is not finished in time, clamping N to SYNC_WAIT_MAX_S', async () => {
    const quiet = await driver.createChannel();
    const started = Date.now();
    const res = await post(`${quiet.webhook_url}?wait=600`, { order: { id: 5 } });
    const took = Date.now() - started;
    expect(res.body).toEqual({ status: 'received', event_id: expect.any(String) });
    expect(took).toBeGreaterThanOrEqual(2_900);
    expect(took).toBeLessThan(20_000);
    expect(await pendingEventsOf(quiet.id)).toHaveLength(1);
  });

  it('refuses a wait that is not a positive whole number (400 invalid_wait), recording it', async () => {
    const refused = await driver.createChannel();
    for (const wait of ['abc', '0', '-1', '1.5', '']) {
      const res = await post(`${refused.webhook_url}?wait=${wait}`, { order: { id: 6 } });
      expect(res.status, `wait=${wait}`).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 400, code: 'invalid_wait' });
    }
    const events = await driver.eventsOf(refused.id);
    expect(events.map((event) => [event.status, event.error])).toEqual(
      Array(5).fill(['rejected', 'invalid_wait']),
    );
  });

  it('ignores a Prefer: wait that does not parse, as RFC 7240 says', async () => {
    for (const prefer of ['wait=soon', 'wait=0', 'wait', 'wait=-3']) {
      const res = await post(channel.webhook_url, { order: { id: 7 } }, { prefer });
      expect(res.status, prefer).toBe(200);
      expect(res.body).toEqual({ status: 'received', event_id: expect.any(String) });
      expect(res.headers.get('preference-applied'), prefer).toBeNull();
    }
  });
});

describe('GET /hooks/{token}/events/{event_id}', () => {
  it('answers the same body as the webhook, before and after the reply', async () => {
    const sent = await post(channel.webhook_url, { order: { id: 10 } });
    const url = `${channel.webhook_url}/events/${sent.body.event_id as string}`;
    expect((await get(url)).body).toEqual({ status: 'received', event_id: sent.body.event_id });
    await eventually(
      async () =>
        (await app.ctx.worker?.runOnce()) === 0 && (await get(url)).body.status === 'replied',
    );
    expect((await get(url)).body).toEqual({
      status: 'replied',
      event_id: sent.body.event_id,
      reply: fakeReplyTo('Order 10'),
    });
  });

  it('holds the answer with ?wait=N until the event finishes', async () => {
    const sent = await post(channel.webhook_url, { order: { id: 11 } });
    const url = `${channel.webhook_url}/events/${sent.body.event_id as string}?wait=3`;
    const res = await answeredByWorker(get(url));
    expect(res.body).toMatchObject({ status: 'replied', reply: fakeReplyTo('Order 11') });
  });

  it('finds only events of the channel of the current token', async () => {
    const other = await driver.createChannel();
    const sent = await post(other.webhook_url, { order: { id: 12 } });
    const eventId = sent.body.event_id as string;
    for (const id of [eventId, '999999999', 'abc', '0']) {
      const res = await get(`${channel.webhook_url}/events/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.body).toMatchObject({ code: 'event_not_found' });
    }
    const rejected = await fetch(channel.webhook_url, { method: 'POST', body: 'no json' });
    expect(rejected.status).toBe(415);
    const [refusedEvent] = (await driver.eventsOf(channel.id)).filter(
      (e) => e.status === 'rejected',
    );
    expect((await get(`${channel.webhook_url}/events/${refusedEvent?.id}`)).status).toBe(404);

    const regenerated = await driver.api('post', `/channels/${other.id}/regenerate-url`);
    const old = await get(`${other.webhook_url}/events/${eventId}`);
    expect(old.status).toBe(404);
    expect(old.body).toMatchObject({ code: 'channel_not_found' });
    const current = await get(`${regenerated.body.webhook_url as string}/events/${eventId}`);
    expect(current.body).toEqual({ status: 'received', event_id: eventId });
  });

  it('uses no quota, refuses other methods (405) and a bad wait (400)', async () => {
    const sent = await post(channel.webhook_url, { order: { id: 13 } });
    const url = `${channel.webhook_url}/events/${sent.body.event_id as string}`;
    const before = (await driver.api('get', '/workspace')).body.chats_used as number;
    for (let i = 0; i < 3; i++) expect((await get(url)).status).toBe(200);
    expect((await driver.api('get', '/workspace')).body.chats_used).toBe(before);

    const posted = await fetch(url, { method: 'POST', body: '{}' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET');
    const bad = await get(`${url}?wait=x`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_wait' });
  });
});

describe('the per-sender rate limit', () => {
  const { driver: limitedDriver } = useTestApp({ env: { RATE_LIMIT_PER_IP: '3' } });

  it('counts fetching a reply', async () => {
    const own = await limitedDriver.createChannel();
    const sent = await post(own.webhook_url, { order: { id: 1 } });
    const url = `${own.webhook_url}/events/${sent.body.event_id as string}`;
    expect((await get(url)).status).toBe(200);
    expect((await get(url)).status).toBe(200);
    const res = await get(url);
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 'rate_limited' });
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

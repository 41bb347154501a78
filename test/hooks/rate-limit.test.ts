import { afterEach, describe, expect, it } from 'vitest';
import { Driver } from '../support/driver.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

let app: TestApp | undefined;
afterEach(() => app?.close());

// Long enough that a slow machine still sends the first requests inside one window.
const WINDOW_MS = 2500;
const redisUrl = process.env.TEST_REDIS_URL;
const stores: [string, Record<string, string>][] = [['in memory', {}]];
// Other test files count in the same Redis from the same address: only the channel limit is
// under test here, so the per-sender limit is set out of reach.
if (redisUrl) stores.push(['in Redis', { REDIS_URL: redisUrl, RATE_LIMIT_PER_IP: '100000000' }]);

describe.each(stores)('rate limits counted %s', (_store, storeEnv) => {
  it('answers 429 with Retry-After past the per-channel limit, and accepts again after the window', async () => {
    app = await startTestApp({
      env: { RATE_LIMIT_PER_CHANNEL: '3', RATE_LIMIT_WINDOW_MS: String(WINDOW_MS), ...storeEnv },
    });
    const driver = new Driver(app);
    const [busy, quiet] = [await driver.createChannel(), await driver.createChannel()];

    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await driver.sendEvent(busy.webhook_url)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);

    const limited = await driver.sendEvent(busy.webhook_url);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit')).toContain('"channel"; r=0');

    // the limit is per URL: another channel is unaffected
    expect((await driver.sendEvent(quiet.webhook_url)).status).toBe(200);
    // 429s are not recorded as events
    expect(await driver.eventsOf(busy.id)).toHaveLength(3);

    await waitForNextWindow(WINDOW_MS);
    expect((await driver.sendEvent(busy.webhook_url)).status).toBe(200);
  });

  it('counts a regenerated URL afresh', async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_CHANNEL: '2', ...storeEnv } });
    const driver = new Driver(app);
    const channel = await driver.createChannel();
    await driver.sendEvent(channel.webhook_url);
    await driver.sendEvent(channel.webhook_url);
    expect((await driver.sendEvent(channel.webhook_url)).status).toBe(429);
    const renewed = await driver.api('post', `/channels/${channel.id}/regenerate-url`).expect(200);
    expect((await driver.sendEvent(renewed.body.webhook_url)).status).toBe(200);
  });
});

describe('rate limits', () => {
  it('limits one sender address over all URLs, before looking at the token', async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_IP: '2', RATE_LIMIT_WINDOW_MS: '60000' } });
    const driver = new Driver(app);
    const [a, b] = [await driver.createChannel(), await driver.createChannel()];
    expect((await driver.sendEvent(a.webhook_url)).status).toBe(200);
    expect((await driver.sendEvent(b.webhook_url)).status).toBe(200);
    const res = await driver.sendEvent(`${app.baseUrl}/hooks/unknown-token-unknown-token`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('60');
  });

  it('sends the IETF RateLimit headers on every answer', async () => {
    app = await startTestApp();
    const driver = new Driver(app);
    const channel = await driver.createChannel();
    const res = await driver.sendEvent(channel.webhook_url);
    expect(res.headers.get('ratelimit')).toMatch(/"sender"; r=\d+; t=\d+, "channel"; r=599; t=\d+/);
    expect(res.headers.get('ratelimit-policy')).toMatch(
      /"sender"; q=1200; w=60.*"channel"; q=600; w=60/,
    );
  });
});

describe('RateLimit headers', () => {
  it('name the limits checked before the answer: none for a 405, the sender only for a 404', async () => {
    app = await startTestApp();
    const driver = new Driver(app);
    const channel = await driver.createChannel();

    const wrongMethod = await driver.sendEvent(channel.webhook_url, undefined, { method: 'GET' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('ratelimit')).toBeNull();

    const unknown = await driver.sendEvent(`${app.baseUrl}/hooks/unknown-token-unknown-token`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('ratelimit')).toMatch(/^"sender"; r=\d+; t=\d+$/);

    const refused = await driver.sendEvent(channel.webhook_url, '[1]');
    expect(refused.status).toBe(400);
    expect(refused.headers.get('ratelimit')).toMatch(/"sender".*"channel"/);
  });
});

// The fixed window ends at a known time; waiting for it is the behaviour under test.
function waitForNextWindow(windowMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, windowMs + 50));
}

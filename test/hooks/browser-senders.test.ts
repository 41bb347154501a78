import { describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

// A small per-channel limit, to show that a page on another origin is refused before it counts.
const { driver } = useTestApp({ env: { RATE_LIMIT_PER_CHANNEL: '3' } });

const SHOP = 'https://shop.example.com';
const fromPage = (origin: string) => ({ headers: { Origin: origin } });

/** A preflight as a browser sends it before a JSON POST from a page. */
function preflight(url: string, origin?: string): Promise<Response> {
  return fetch(url, {
    method: 'OPTIONS',
    headers: {
      ...(origin ? { Origin: origin } : {}),
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type, prefer',
    },
  });
}

interface ListedEvent {
  id: string;
  status: string;
  error: string | null;
}

async function eventsOf(channel: ChannelJson): Promise<ListedEvent[]> {
  const res = await driver.api('get', `/events?channel_id=${channel.id}&limit=50`).expect(200);
  return res.body.data as ListedEvent[];
}

describe('allowed_origins', () => {
  it('is kept as browsers write an origin, and refuses what is not one', async () => {
    const channel = await driver.createChannel({
      allowed_origins: ['HTTPS://Shop.Example.com:443', 'http://localhost:5173'],
    });
    const originsOf = (c: ChannelJson) =>
      (c as ChannelJson & { allowed_origins: string[] }).allowed_origins;
    expect(originsOf(channel)).toEqual([SHOP, 'http://localhost:5173']);
    expect(originsOf(await driver.createChannel())).toEqual([]);

    const invalid: unknown[] = [
      ['https://shop.example.com/checkout'],
      ['shop.example.com'],
      ['ftp://shop.example.com'],
      ['https://user@shop.example.com'],
      ['https://shop.example.com?x=1'],
      ['*', SHOP],
      Array.from({ length: 21 }, (_, i) => `https://shop${i}.example.com`),
      SHOP,
    ];
    for (const allowed_origins of invalid) {
      const res = await driver.updateChannel(channel.id, { allowed_origins });
      expect(res.status, JSON.stringify(allowed_origins)).toBe(400);
      expect(res.body.detail).toMatch(/^allowed_origins/);
    }
    const kept = await driver.api('get', `/channels/${channel.id}`).expect(200);
    expect(kept.body.allowed_origins).toEqual([SHOP, 'http://localhost:5173']);
  });
});

describe('a POST from a web page', () => {
  it('from a listed origin is answered as always, with the headers that let the page read it', async () => {
    const channel = await driver.createChannel({ allowed_origins: [SHOP] });
    const res = await driver.sendEvent(channel.webhook_url, { order: 1 }, fromPage(SHOP));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'received' });
    expect(res.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(res.headers.get('vary')).toMatch(/Origin/);
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'Preference-Applied, Retry-After',
    );
  });

  it('from another origin is 403 origin_not_allowed, without CORS headers, and kept as rejected', async () => {
    const channel = await driver.createChannel({ allowed_origins: [SHOP] });
    for (const origin of ['https://evil.example.com', 'http://shop.example.com', 'null']) {
      const res = await driver.sendEvent(channel.webhook_url, { order: 2 }, fromPage(origin));
      expect(res.status, origin).toBe(403);
      expect(res.body).toMatchObject({ code: 'origin_not_allowed' });
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
    const events = await eventsOf(channel);
    expect(events.map((e) => [e.status, e.error])).toEqual(
      Array(3).fill(['rejected', 'origin_not_allowed']),
    );
    const detail = await driver.api('get', `/events/${events[0]?.id}`);
    expect(detail.body.payload).toBe('{"order":2}');
  });

  it('without Origin (a server) is unaffected by the list', async () => {
    const channel = await driver.createChannel({ allowed_origins: [SHOP] });
    const res = await driver.sendEvent(channel.webhook_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('from a listed origin carries the CORS headers on refusals too', async () => {
    const channel = await driver.createChannel({ allowed_origins: [SHOP] });
    const invalid = await driver.sendEvent(channel.webhook_url, '{"order":', fromPage(SHOP));
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('access-control-allow-origin')).toBe(SHOP);

    await driver.updateChannel(channel.id, { enabled: false }).expect(200);
    const disabled = await driver.sendEvent(channel.webhook_url, undefined, fromPage(SHOP));
    expect(disabled.body).toMatchObject({ code: 'channel_disabled' });
    expect(disabled.headers.get('access-control-allow-origin')).toBe(SHOP);
  });

  it("is checked right after the token: another origin is refused before the channel's rate limit", async () => {
    const channel = await driver.createChannel({ allowed_origins: [SHOP] });
    for (let i = 0; i < 3; i++)
      expect((await driver.sendEvent(channel.webhook_url, { i }, fromPage(SHOP))).status).toBe(200);
    const limited = await driver.sendEvent(channel.webhook_url, { i: 3 }, fromPage(SHOP));
    expect(limited.status).toBe(429);
    // The page can read why and when to try again.
    expect(limited.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);

    const other = await driver.sendEvent(channel.webhook_url, { i: 4 }, fromPage('https://x.test'));
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ code: 'origin_not_allowed' });
  });

  it('takes any page with ["*"], answering Access-Control-Allow-Origin: *', async () => {
    const channel = await driver.createChannel({ allowed_origins: ['*'] });
    const res = await driver.sendEvent(channel.webhook_url, undefined, fromPage('https://a.test'));
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('to a channel with no allowed origins is answered as before: Origin is not read', async () => {
    const channel = await driver.createChannel();
    const res = await driver.sendEvent(channel.webhook_url, undefined, fromPage(SHOP));
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('a preflight (OPTIONS)', () => {
  it('from a listed origin is 204 with what the page may send, and stores nothing', async () => {
    const channel = await driver.createChannel({ allowed_origins: [SHOP] });
    const res = await preflight(channel.webhook_url, SHOP);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(res.headers.get('access-control-allow-methods')).toBe('POST');
    const allowed = res.headers.get('access-control-allow-headers')?.split(/,\s*/);
    expect(allowed).toEqual(
      expect.arrayContaining([
        'content-type',
        'prefer',
        'idempotency-key',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]),
    );
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toMatch(/Origin/);
    expect(await eventsOf(channel)).toEqual([]);
  });

  it('from another origin, or none, is 403 origin_not_allowed', async () => {
    const channel = await driver.createChannel({ allowed_origins: [SHOP] });
    for (const origin of ['https://evil.example.com', undefined]) {
      const res = await preflight(channel.webhook_url, origin);
      expect(res.status, origin).toBe(403);
      expect(((await res.json()) as { code: string }).code).toBe('origin_not_allowed');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect(await eventsOf(channel)).toEqual([]);
  });

  it('for an unknown token is 404, and for a channel without allowed origins 405 as before', async () => {
    const channel = await driver.createChannel();
    const unknown = new URL(
      '/hooks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      channel.webhook_url,
    );
    expect((await preflight(unknown.href, SHOP)).status).toBe(404);
    const res = await preflight(channel.webhook_url, SHOP);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

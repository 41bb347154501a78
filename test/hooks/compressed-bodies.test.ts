import { createHmac } from 'node:crypto';
import zlib from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChannelJson } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp();
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel();
});

const body = '{"order":{"id":1,"note":"gzip, deflate or br"}}';

describe('Content-Encoding', () => {
  it.each([
    ['gzip', zlib.gzipSync(body)],
    ['deflate', zlib.deflateSync(body)],
    ['br', zlib.brotliCompressSync(body)],
  ])('decodes %s and keeps the decoded body', async (encoding, bytes) => {
    const res = await driver.sendEvent(channel.webhook_url, new Uint8Array(bytes), {
      headers: { 'Content-Encoding': encoding },
    });
    expect(res.status).toBe(200);
    const event = await driver.api('get', `/events/${res.body.event_id}`).expect(200);
    expect(event.body.payload).toBe(body);
  });

  it('refuses a 10 MB gzip bomb with 413 without decoding it all', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024, ' '));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await driver.sendEvent(channel.webhook_url, new Uint8Array(bomb), {
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    // the sender sent far less than the limit: the answer says what was measured
    expect(res.body.detail).toBe(
      'The body, once decoded from its Content-Encoding (gzip), is larger than the limit of ' +
        '1048576 bytes (BODY_LIMIT): the limit applies to the size after decoding.',
    );
    // recorded as rejected, keeping only the head of the decoded body
    const rejected = (await driver.eventsOf(channel.id)).at(-1);
    expect(rejected?.error).toBe('payload_too_large');
    expect(rejected?.payload).toMatch(/^ +$/);
    expect(rejected?.payload.length).toBeLessThanOrEqual(64 * 1024);
  });

  it('answers 400 invalid_encoding for a body that does not decode, and 415 for other encodings', async () => {
    const broken = await driver.sendEvent(channel.webhook_url, body, {
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('invalid_encoding');
    for (const encoding of ['compress', 'zstd', 'gzip, snappy']) {
      const res = await driver.sendEvent(channel.webhook_url, body, {
        headers: { 'Content-Encoding': encoding },
      });
      expect(res.status, encoding).toBe(415);
      expect(res.body.code).toBe('unsupported_media_type');
    }
    const errors = (await driver.eventsOf(channel.id)).slice(-4).map((e) => e.error);
    expect(errors).toEqual([
      'invalid_encoding',
      'unsupported_media_type',
      'unsupported_media_type',
      'unsupported_media_type',
    ]);
  });

  it('checks signatures over the decoded body', async () => {
    const secret = 'shopify-app-secret';
    const signed = await driver.createChannel({ verification: { scheme: 'shopify', secret } });
    const hmac = createHmac('sha256', secret).update(body).digest('base64');
    const res = await driver.sendEvent(signed.webhook_url, new Uint8Array(zlib.gzipSync(body)), {
      headers: { 'Content-Encoding': 'gzip', 'X-Shopify-Hmac-Sha256': hmac },
    });
    expect(res.status).toBe(200);
  });

  it('refuses a body that names more than two encodings with 415, before decoding any, and records it', async () => {
    let thrice = Buffer.from(body);
    for (let i = 0; i < 3; i++) thrice = zlib.gzipSync(thrice);
    for (const encoding of ['gzip, gzip, gzip', Array(1000).fill('gzip').join(', ')]) {
      const res = await driver.sendEvent(channel.webhook_url, new Uint8Array(thrice), {
        headers: { 'Content-Encoding': encoding },
      });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'unsupported_media_type' });
      expect(res.body.detail).toMatch(/at most 2/);
    }
    const errors = (await driver.eventsOf(channel.id)).slice(-2).map((e) => e.error);
    expect(errors).toEqual(['unsupported_media_type', 'unsupported_media_type']);

    const twice = zlib.gzipSync(zlib.gzipSync(body));
    const res = await driver.sendEvent(channel.webhook_url, new Uint8Array(twice), {
      headers: { 'Content-Encoding': 'gzip, gzip' },
    });
    expect(res.status).toBe(200);
  });
});

describe('the memory that decoding may hold', () => {
  // Brotli that names a 16 MiB window and decodes to 32 MiB of zeros, in a few dozen bytes.
  const brotliBomb = zlib.brotliCompressSync(Buffer.alloc(32 * 1024 * 1024), {
    params: {
      [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
      [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
    },
  });

  it('answers 503 with Retry-After while the decoders hold the whole budget, and stores nothing', async () => {
    const budget = app.ctx.ingest.decodeBudget;
    const before = (await driver.eventsOf(channel.id)).length;
    // Decoders in flight hold all of it.
    const giveBack = budget.take(budget.limitBytes);
    try {
      for (const [encoding, bytes] of [
        ['gzip', zlib.gzipSync(body)],
        ['br', zlib.brotliCompressSync(body)],
      ] as const) {
        const res = await driver.sendEvent(channel.webhook_url, new Uint8Array(bytes), {
          headers: { 'Content-Encoding': encoding },
        });
        expect(res.status, encoding).toBe(503);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.body.code).toBe('service_unavailable');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // A body without Content-Encoding needs no decoder.
      expect((await driver.sendEvent(channel.webhook_url, body)).status).toBe(200);
    } finally {
      giveBack?.();
    }
    expect((await driver.eventsOf(channel.id)).length).toBe(before + 1);
    const res = await driver.sendEvent(channel.webhook_url, new Uint8Array(zlib.gzipSync(body)), {
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(res.status).toBe(200);
  });

  it('decodes at once only what fits the budget: 40 brotli bombs are each refused, 413 or 503', async () => {
    expect(brotliBomb.length).toBeLessThan(100);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        driver.sendEvent(channel.webhook_url, new Uint8Array(brotliBomb), {
          headers: { 'Content-Encoding': 'br' },
        }),
      ),
    );
    for (const res of answers) {
      expect([413, 503]).toContain(res.status);
      if (res.status === 503) expect(res.headers.get('retry-after')).toBe('1');
    }
    expect(app.ctx.ingest.decodeBudget.inUse).toBe(0);
  });
});

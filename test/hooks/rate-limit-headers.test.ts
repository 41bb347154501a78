import { createServer, type IncomingHttpHeaders } from 'node:http';
import express from 'express';
import { MemoryStore, rateLimit, type Options } from 'express-rate-limit';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { HookRateLimit, senderKey } from '../../src/hooks/rate-limits.js';

// The receiver counts with express-rate-limit's stores but writes the draft-8 headers itself:
// they must stay exactly what the express-rate-limit middleware wrote.

const WINDOW_MS = 60_000;
const LIMIT = 2;

/** express-rate-limit as the receiver used it, keyed by `key`. */
function middlewareAnswers(name: string, key: string) {
  const app = express();
  app.use(
    rateLimit({
      windowMs: WINDOW_MS,
      limit: LIMIT,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      identifier: name,
      keyGenerator: () => key,
    }),
  );
  app.post('/', (_req, res) => void res.end());
  return app;
}

/** The receiver's HookRateLimit over a MemoryStore, keyed by `key`. */
function hookAnswers(name: string, key: string) {
  const store = new MemoryStore();
  store.init({ windowMs: WINDOW_MS } as Options);
  const limit = new HookRateLimit(name, LIMIT, WINDOW_MS, store, (error) => {
    throw error;
  });
  return createServer((_req, res) => {
    void limit.hit(key, res).then((refusal) => {
      for (const [header, value] of Object.entries(refusal?.headers ?? {}))
        res.setHeader(header, value);
      res.statusCode = refusal?.status ?? 200;
      res.end();
    });
  });
}

const limitHeaders = (headers: IncomingHttpHeaders) => ({
  ratelimit: headers.ratelimit,
  'ratelimit-policy': headers['ratelimit-policy'],
  'retry-after': headers['retry-after'],
});

describe('HookRateLimit headers', () => {
  it.each([
    ['sender', senderKey('203.0.113.9')],
    ['sender', senderKey('2001:db8:1:2::7')],
    ['channel', 'a'.repeat(64)],
  ])(
    'are those of express-rate-limit for %s key %s, up to and past the limit',
    async (name, key) => {
      const reference = middlewareAnswers(name, key);
      const ours = hookAnswers(name, key);
      for (let i = 0; i <= LIMIT; i++) {
        const [expected, actual] = await Promise.all([
          request(reference).post('/'),
          request(ours).post('/'),
        ]);
        expect(actual.status).toBe(expected.status);
        expect(limitHeaders(actual.headers)).toEqual(limitHeaders(expected.headers));
      }
    },
  );

  it('keys an IPv6 sender by its /56 network, an IPv4-mapped one by its IPv4 address', () => {
    expect(senderKey('2001:db8:1:2::7')).toBe(senderKey('2001:db8:1:ff::1'));
    expect(senderKey('2001:db8:1:2::7')).not.toBe(senderKey('2001:db8:2:2::7'));
    expect(senderKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(senderKey('203.0.113.9')).toBe('203.0.113.9');
    expect(senderKey(undefined)).toBe('');
  });

  it('lets the request through without headers when the store fails', async () => {
    const failures: unknown[] = [];
    const broken = { increment: () => Promise.reject(new Error('store down')) };
    const limit = new HookRateLimit('channel', 1, WINDOW_MS, broken, (e) => failures.push(e));
    const res = { appendHeader: () => expect.unreachable('no header') };
    expect(await limit.hit('k', res as never)).toBeUndefined();
    expect(failures).toHaveLength(1);
  });
});

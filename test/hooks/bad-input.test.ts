import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChannelJson, type HookResponse } from '../support/driver.js';
import { useTestApp } from '../support/harness.js';

const { app, driver } = useTestApp({
  env: { BODY_LIMIT: '64kb', RATE_LIMIT_PER_CHANNEL: '100000000', RATE_LIMIT_PER_IP: '100000000' },
});
let channel: ChannelJson;

beforeAll(async () => {
  channel = await driver.createChannel();
});

const bytes = (...values: number[]) => new Uint8Array(values);
const LIMIT = 64 * 1024;

// [what, body, content type, status, code]
const corpus: [string, string | Uint8Array, string | null, number, string | undefined][] = [
  ['truncated object', '{"order":{"id":1', 'application/json', 400, 'invalid_json'],
  ['truncated string', '{"a":"abc', 'application/json', 400, 'invalid_json'],
  ['trailing garbage', '{"a":1} x', 'application/json', 400, 'invalid_json'],
  ['two documents', '{"a":1}{"b":2}', 'application/json', 400, 'invalid_json'],
  ['empty body', '', 'application/json', 400, 'invalid_json'],
  ['empty body without Content-Type', '', null, 400, 'invalid_json'],
  ['NaN', '{"a":NaN}', 'application/json', 400, 'invalid_json'],
  [
    'raw NUL byte',
    bytes(0x7b, 0x22, 0x61, 0x22, 0x3a, 0x00, 0x7d),
    'application/json',
    400,
    'invalid_json',
  ],
  [
    'invalid UTF-8',
    bytes(0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d),
    'application/json',
    400,
    'invalid_json',
  ],
  [
    'overlong UTF-8',
    bytes(0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d),
    'application/json',
    400,
    'invalid_json',
  ],
  [
    'UTF-16 body',
    new Uint8Array(Buffer.from('{"a":1}', 'utf16le')),
    'application/json',
    400,
    'invalid_json',
  ],
  [
    'deep nesting (100 000)',
    `{"a":${'['.repeat(100_000)}`,
    'application/json',
    413,
    'payload_too_large',
  ],
  [
    'deep nesting (5 000, under the size limit)',
    `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    'application/json',
    400,
    'invalid_json',
  ],
  ['array', '[{"a":1}]', 'application/json', 400, 'payload_not_object'],
  ['string', '"{}"', 'application/json', 400, 'payload_not_object'],
  [
    'form-urlencoded',
    'a=1&b=2',
    'application/x-www-form-urlencoded',
    415,
    'unsupported_media_type',
  ],
  [
    'multipart',
    '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--',
    'multipart/form-data; boundary=b',
    415,
    'unsupported_media_type',
  ],
  ['text/plain JSON', '{"a":1}', 'text/plain', 415, 'unsupported_media_type'],
  ['text/json', '{"a":1}', 'text/json', 415, 'unsupported_media_type'],
  ['malformed Content-Type', '{"a":1}', 'application/json; charset', 415, 'unsupported_media_type'],
  [
    'one byte over the limit',
    JSON.stringify({ a: 'x'.repeat(LIMIT - 8 + 1) }),
    'application/json',
    413,
    'payload_too_large',
  ],
  [
    'huge string (exactly at the limit)',
    JSON.stringify({ a: 'x'.repeat(LIMIT - 8) }),
    'application/json',
    200,
    undefined,
  ],
  ['lone surrogates', '{"a":"\\ud800","b":"\\udfff x"}', 'application/json', 200, undefined],
  ['escaped NUL', '{"a":"\\u0000"}', 'application/json', 200, undefined],
  ['duplicate keys', '{"a":1,"a":2}', 'application/json', 200, undefined],
  [
    '__proto__ keys',
    '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
    'application/json',
    200,
    undefined,
  ],
  [
    'UTF-8 BOM',
    new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from('{"a":1}')]),
    'application/json',
    200,
    undefined,
  ],
  ['vendor +json type', '{"a":1}', 'application/cloudevents+json; charset=utf-8', 200, undefined],
];

describe('the detail of a refusal', () => {
  it("gives curl's header for a body sent as a form (curl --data-binary @file)", async () => {
    const res = await driver.sendEvent(channel.webhook_url, '{"order":{"id":1}}', {
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
    expect(res.body.detail).toBe(
      'The body must be JSON (Content-Type: application/json), not ' +
        "application/x-www-form-urlencoded (with curl: -H 'Content-Type: application/json' " +
        '--data-binary @event.json).',
    );
  });

  it.each([
    ['no body at all', '', null],
    ['white space only', ' \r\n\t', 'application/json'],
  ])('says an empty body is empty (%s)', async (_what, body, contentType) => {
    const res = await driver.sendEvent(channel.webhook_url, body, { contentType });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    expect(res.body.detail).toMatch(/^The body is empty: send a JSON object/);
    expect(res.body.detail).not.toMatch(/end of input/);
  });

  it('names BODY_LIMIT in a 413', async () => {
    const res = await driver.sendEvent(
      channel.webhook_url,
      JSON.stringify({ a: 'x'.repeat(LIMIT) }),
    );
    expect(res.status).toBe(413);
    expect(res.body.detail).toBe(
      `The body is larger than the limit of ${LIMIT} bytes (BODY_LIMIT).`,
    );
  });
});

describe("a form body with a payload field (GitHub's default)", () => {
  it('answers 415 with a detail naming the fix, and keeps the refusal in Brain Logs', async () => {
    const json = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    const res = await driver.sendEvent(channel.webhook_url, `payload=${encodeURIComponent(json)}`, {
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
    expect(res.body.detail).toContain('GitHub: Content type → application/json');
    const events = await driver.eventsOf(channel.id);
    expect(events.at(-1)).toMatchObject({ status: 'rejected', error: 'unsupported_media_type' });
  });

  it('keeps the general detail for other forms', async () => {
    const res = await driver.sendEvent(channel.webhook_url, 'a=1&b=2', {
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(415);
    expect(res.body.detail).not.toContain('GitHub');
    expect(res.body.detail).toContain('application/json');
  });
});

function expectSafeProblem(res: HookResponse, status: number, code: string | undefined) {
  expect(res.status).toBe(status);
  if (code) {
    expect(res.body.code).toBe(code);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // nothing internal reaches the sender
    expect(JSON.stringify(res.body)).not.toMatch(
      /\bat \S+ \(|node_modules|\/src\/|SyntaxError|RangeError|PGlite|postgres/i,
    );
  }
}

describe('bad input corpus', () => {
  it.each(corpus)('%s', async (_what, body, contentType, status, code) => {
    expectSafeProblem(
      await driver.sendEvent(channel.webhook_url, body, { contentType }),
      status,
      code,
    );
  });

  it('keeps nothing of a prototype pollution attempt', () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses very long tokens and path tricks with 404', async () => {
    for (const path of [
      `/hooks/${'a'.repeat(10_000)}`,
      '/hooks/..%2f..%2fapi%2fv1',
      '/hooks/%00',
      '/hooks/a%20b',
      '/hooks/a/b/c',
    ]) {
      const res = await fetch(`${app.baseUrl}${path}`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect([404, 414, 431]).toContain(res.status);
    }
  });

  it('answers 405 to every method but POST', async () => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await driver.sendEvent(channel.webhook_url, '{}', { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });
});

describe('fuzzing the receiver', () => {
  const contentTypes = fc.constantFrom<string | null>(
    null,
    'application/json',
    'application/x-www-form-urlencoded',
    'text/plain',
    'application/ld+json',
    'multipart/form-data; boundary=x',
    'application/octet-stream',
  );
  const bodies = fc.oneof(
    fc.uint8Array({ maxLength: 256 }),
    fc.json({ maxDepth: 4 }),
    fc.string({ maxLength: 128 }),
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify({ value })),
  );

  it('answers every request with a status of the contract, and stays up', async () => {
    await fc.assert(
      fc.asyncProperty(bodies, contentTypes, async (body, contentType) => {
        const res = await driver.sendEvent(channel.webhook_url, body, { contentType });
        expect([200, 400, 415]).toContain(res.status);
        if (res.status !== 200) {
          expect(['invalid_json', 'payload_not_object', 'unsupported_media_type']).toContain(
            res.body.code,
          );
        }
      }),
      { numRuns: 150 },
    );
    expect((await fetch(`${app.baseUrl}/healthz`)).status).toBe(200);
  });

  it('accepts every JSON object a sender can produce, and stores it byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })),
        async (object) => {
          const text = JSON.stringify(object);
          const res = await driver.sendEvent(channel.webhook_url, text);
          expect(res.status).toBe(200);
          const { rows } = await app.ctx.db.query<{ payload: string }>(
            'select payload from events where id = $1',
            [res.body.event_id],
          );
          expect(rows[0]?.payload).toBe(text);
        },
      ),
      { numRuns: 60 },
    );
  });
});

import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DecodeBudget } from '../../src/hooks/decode-budget.js';
import { decodeBody } from '../../src/hooks/decode-body.js';

const text = Buffer.from('{"order":{"id":1}}');
const budget = new DecodeBudget(256 * 1024 * 1024);

describe('decodeBody', () => {
  it.each([
    ['gzip', zlib.gzipSync(text)],
    ['x-gzip', zlib.gzipSync(text)],
    ['deflate', zlib.deflateSync(text)],
    ['deflate', zlib.deflateRawSync(text)],
    ['br', zlib.brotliCompressSync(text)],
    ['gzip, br', zlib.brotliCompressSync(zlib.gzipSync(text))],
    ['identity', text],
    [undefined, text],
  ])('undoes Content-Encoding %s', async (encoding, bytes) => {
    expect(await decodeBody(bytes, encoding, 1024, 16, budget)).toEqual({ ok: true, bytes: text });
  });

  it('stops a gzip bomb at the limit without decoding it all', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024));
    const before = process.memoryUsage().arrayBuffers;
    const decoded = await decodeBody(bomb, 'gzip', 1024 * 1024, 1024, budget);
    expect(decoded).toMatchObject({ ok: false, problem: 'too_large' });
    expect(decoded.ok === false && 'head' in decoded && decoded.head.length).toBe(1024);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(5 * 1024 * 1024);
  });

  it('accepts a body exactly at the limit', async () => {
    const decoded = await decodeBody(
      zlib.gzipSync(Buffer.alloc(5000, 'a')),
      'gzip',
      5000,
      10,
      budget,
    );
    expect(decoded.ok).toBe(true);
  });

  it('says which encoding did not decode', async () => {
    expect(await decodeBody(Buffer.from('not gzip at all'), 'gzip', 1024, 16, budget)).toEqual({
      ok: false,
      problem: 'invalid',
      encoding: 'gzip',
    });
    const truncated = zlib.gzipSync(text).subarray(0, 10);
    expect(await decodeBody(truncated, 'gzip', 1024, 16, budget)).toMatchObject({
      problem: 'invalid',
    });
  });

  it('names an encoding it does not support', async () => {
    expect(await decodeBody(text, 'compress', 1024, 16, budget)).toEqual({
      ok: false,
      problem: 'unsupported',
      encoding: 'compress',
    });
    expect(await decodeBody(text, 'zstd, gzip', 1024, 16, budget)).toMatchObject({
      encoding: 'zstd',
    });
  });

  it('refuses more than two encodings before decoding any', async () => {
    const thrice = zlib.gzipSync(zlib.gzipSync(zlib.gzipSync(text)));
    expect(await decodeBody(thrice, 'gzip, gzip, gzip', 1024, 16, budget)).toEqual({
      ok: false,
      problem: 'too_many',
      count: 3,
    });
    const twice = zlib.gzipSync(zlib.gzipSync(text));
    expect(await decodeBody(twice, 'gzip,gzip', 1024, 16, budget)).toEqual({
      ok: true,
      bytes: text,
    });
  });

  it('decodes only within its budget, and gives the budget back however decoding ends', async () => {
    const small = new DecodeBudget(8 * 1024 * 1024);
    // brotli is charged its largest window: more than this whole budget, so it runs alone
    const release = small.take(1);
    expect(await decodeBody(zlib.brotliCompressSync(text), 'br', 1024, 16, small)).toEqual({
      ok: false,
      problem: 'busy',
    });
    release?.();
    for (const [bytes, encoding] of [
      [zlib.brotliCompressSync(text), 'br'],
      [Buffer.from('not gzip'), 'gzip'],
      [zlib.gzipSync(Buffer.alloc(4096)), 'gzip'],
    ] as const) {
      const decoding = decodeBody(bytes, encoding, 1024, 16, small);
      expect(small.inUse).toBeGreaterThan(0);
      await decoding;
      expect(small.inUse, encoding).toBe(0);
    }
    const decoded = await decodeBody(zlib.brotliCompressSync(text), 'br', 1024, 16, small);
    expect(decoded).toEqual({ ok: true, bytes: text });
  });
});

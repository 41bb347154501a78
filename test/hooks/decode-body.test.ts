import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../src/hooks/decode-body.js';

const text = Buffer.from('{"order":{"id":1}}');

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
    expect(await decodeBody(bytes, encoding, 1024, 16)).toEqual({ ok: true, bytes: text });
  });

  it('stops a gzip bomb at the limit without decoding it all', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024));
    const before = process.memoryUsage().arrayBuffers;
    const decoded = await decodeBody(bomb, 'gzip', 1024 * 1024, 1024);
    expect(decoded).toMatchObject({ ok: false, problem: 'too_large' });
    expect(decoded.ok === false && 'head' in decoded && decoded.head.length).toBe(1024);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(5 * 1024 * 1024);
  });

  it('accepts a body exactly at the limit', async () => {
    const decoded = await decodeBody(zlib.gzipSync(Buffer.alloc(5000, 'a')), 'gzip', 5000, 10);
    expect(decoded.ok).toBe(true);
  });

  it('says which encoding did not decode', async () => {
    expect(await decodeBody(Buffer.from('not gzip at all'), 'gzip', 1024, 16)).toEqual({
      ok: false,
      problem: 'invalid',
      encoding: 'gzip',
    });
    const truncated = zlib.gzipSync(text).subarray(0, 10);
    expect(await decodeBody(truncated, 'gzip', 1024, 16)).toMatchObject({ problem: 'invalid' });
  });

  it('names an encoding it does not support', async () => {
    expect(await decodeBody(text, 'compress', 1024, 16)).toEqual({
      ok: false,
      problem: 'unsupported',
      encoding: 'compress',
    });
    expect(await decodeBody(text, 'zstd, gzip', 1024, 16)).toMatchObject({ encoding: 'zstd' });
  });
});

import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

/** The outcome of undoing a request's Content-Encoding, limited to `limit` decoded bytes. */
export type DecodedBody =
  | { ok: true; bytes: Buffer }
  | { ok: false; problem: 'too_large'; head: Buffer }
  | { ok: false; problem: 'unsupported'; encoding: string }
  | { ok: false; problem: 'invalid'; encoding: string };

// HTTP's "deflate" is the zlib format, but some senders send raw deflate data: a zlib stream
// starts with a compression-method byte of 8 and a header whose 16 bits are a multiple of 31.
const isZlib = (bytes: Buffer) =>
  bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && bytes.readUInt16BE(0) % 31 === 0;

const DECODERS: Record<string, (bytes: Buffer) => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: (bytes) => (isZlib(bytes) ? zlib.createInflate() : zlib.createInflateRaw()),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * Undoes `Content-Encoding` (a list is undone last to first), keeping at most `limit` decoded
 * bytes: decoding stops at the first chunk past the limit, so a decompression bomb never takes
 * more memory than the limit. Of a body too large, the first `headBytes` are kept for the logs.
 */
export async function decodeBody(
  raw: Buffer,
  contentEncoding: string | undefined,
  limit: number,
  headBytes: number,
): Promise<DecodedBody> {
  const encodings = (contentEncoding ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'identity')
    .reverse();
  const unsupported = encodings.find((name) => !Object.hasOwn(DECODERS, name));
  if (unsupported !== undefined)
    return { ok: false, problem: 'unsupported', encoding: unsupported };

  let bytes = raw;
  for (const encoding of encodings) {
    const decoder = (DECODERS[encoding] as (bytes: Buffer) => Transform)(bytes);
    const decoded = await inflateUpTo(decoder, bytes, limit, headBytes);
    if (decoded === 'invalid') return { ok: false, problem: 'invalid', encoding };
    if ('head' in decoded) return { ok: false, problem: 'too_large', head: decoded.head };
    bytes = decoded.bytes;
  }
  return { ok: true, bytes };
}

function inflateUpTo(
  decoder: Transform,
  input: Buffer,
  limit: number,
  headBytes: number,
): Promise<{ bytes: Buffer } | { head: Buffer } | 'invalid'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (outcome: { bytes: Buffer } | { head: Buffer } | 'invalid') => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    decoder.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      settle({ head: Buffer.concat([...chunks, chunk]).subarray(0, headBytes) });
      decoder.destroy();
    });
    decoder.on('end', () => settle({ bytes: Buffer.concat(chunks, size) }));
    decoder.on('error', () => settle('invalid'));
    decoder.end(input);
  });
}

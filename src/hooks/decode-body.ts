import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { DecodeBudget } from './decode-budget.js';

/** The outcome of undoing a request's Content-Encoding, limited to `limit` decoded bytes. */
export type DecodedBody =
  | { ok: true; bytes: Buffer }
  | { ok: false; problem: 'too_large'; head: Buffer }
  | { ok: false; problem: 'unsupported'; encoding: string }
  | { ok: false; problem: 'too_many'; count: number }
  | { ok: false; problem: 'invalid'; encoding: string }
  /** The decoders running now hold the whole budget: the sender should try again shortly. */
  | { ok: false; problem: 'busy' };

/** How many content encodings a body may name: each one is a decoder more to run. */
export const MAX_CONTENT_ENCODINGS = 2;

// HTTP's "deflate" is the zlib format, but some senders send raw deflate data: a zlib stream
// starts with a compression-method byte of 8 and a header whose 16 bits are a multiple of 31.
const isZlib = (bytes: Buffer) =>
  bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && bytes.readUInt16BE(0) % 31 === 0;

const KIB = 1024;
const MIB = 1024 * KIB;

// What one decoder holds at most besides its output, rounded up. Inflate: a 32 KiB window, its
// state and a 16 KiB output buffer. Brotli: a ring buffer as large as the window the stream
// names, up to 16 MiB (Node leaves large windows off), and its Huffman tables.
const INFLATE_MEMORY = 64 * KIB;
const BROTLI_MEMORY = 20 * MIB;

interface Decoder {
  create: (bytes: Buffer) => Transform;
  memory: number;
}

const DECODERS: Record<string, Decoder> = {
  gzip: { create: () => zlib.createGunzip(), memory: INFLATE_MEMORY },
  'x-gzip': { create: () => zlib.createGunzip(), memory: INFLATE_MEMORY },
  deflate: {
    create: (bytes) => (isZlib(bytes) ? zlib.createInflate() : zlib.createInflateRaw()),
    memory: INFLATE_MEMORY,
  },
  br: { create: () => zlib.createBrotliDecompress(), memory: BROTLI_MEMORY },
};

/**
 * Undoes `Content-Encoding` (a list is undone last to first), keeping at most `limit` decoded
 * bytes: decoding stops at the first chunk past the limit, so a decompression bomb never takes
 * more memory than the limit. Of a body too large, the first `headBytes` are kept for the logs.
 * The decoders' worst case is taken from `budget` before the first starts, and given back when
 * the last ends: each decoder's own memory, its output chunks and their concatenation.
 */
export async function decodeBody(
  raw: Buffer,
  contentEncoding: string | undefined,
  limit: number,
  headBytes: number,
  budget: DecodeBudget,
): Promise<DecodedBody> {
  const named = (contentEncoding ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (named.length > MAX_CONTENT_ENCODINGS)
    return { ok: false, problem: 'too_many', count: named.length };
  const encodings = named.filter((name) => name !== 'identity').reverse();
  const unsupported = encodings.find((name) => !Object.hasOwn(DECODERS, name));
  if (unsupported !== undefined)
    return { ok: false, problem: 'unsupported', encoding: unsupported };
  if (encodings.length === 0) return { ok: true, bytes: raw };

  const decoderOf = (name: string) => DECODERS[name] as Decoder;
  const worstCase = encodings.reduce((sum, name) => sum + decoderOf(name).memory + 2 * limit, 0);
  const giveBack = budget.take(worstCase);
  if (!giveBack) return { ok: false, problem: 'busy' };
  try {
    let bytes = raw;
    for (const encoding of encodings) {
      const decoded = await inflateUpTo(decoderOf(encoding).create(bytes), bytes, limit, headBytes);
      if (decoded === 'invalid') return { ok: false, problem: 'invalid', encoding };
      if ('head' in decoded) return { ok: false, problem: 'too_large', head: decoded.head };
      bytes = decoded.bytes;
    }
    return { ok: true, bytes };
  } finally {
    giveBack();
  }
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
      // A copy of the head only: a view of the whole output would keep all of it alive.
      settle({ head: Buffer.concat([...chunks, chunk], Math.min(size, headBytes)) });
      decoder.destroy();
    });
    decoder.on('end', () => settle({ bytes: Buffer.concat(chunks, size) }));
    decoder.on('error', () => settle('invalid'));
    decoder.end(input);
  });
}

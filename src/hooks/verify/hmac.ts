import { hash } from 'node:crypto';

/**
 * HMAC-SHA256 (RFC 2104) on node:crypto's one-shot `hash()`, with each key's pads made once.
 *
 * Why not `createHmac`: under load, creating its object cost more than hashing the body (OpenSSL
 * 3.0 fetches the digest anew for each context an HMAC sets up); the one-shot `hash()` makes no
 * object (bench/HISTORY.md). The result is `createHmac`'s byte for byte
 * (test/hooks/verify/hmac.test.ts compares them).
 */
export function hmacSha256(key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  return hash('sha256', outerMessage(key, parts), 'buffer');
}

/**
 * hmacSha256 as base64 text, the form Standard Webhooks signatures take: `hash()` encodes it
 * itself, with no Buffer made for the digest (each digest Buffer is memory of its own, which
 * allocating and collecting cost more than the hashing).
 */
export function hmacSha256Base64(key: string | Buffer, ...parts: (string | Buffer)[]): string {
  return hash('sha256', outerMessage(key, parts), 'base64');
}

/** What the outer hash hashes: the outer pad, then the inner hash of the inner pad and parts. */
function outerMessage(key: string | Buffer, parts: (string | Buffer)[]): Buffer {
  const { inner, outer } = padsOf(key);
  let length = BLOCK_BYTES;
  for (const part of parts)
    length += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  const message = Buffer.allocUnsafe(length);
  inner.copy(message);
  let at = BLOCK_BYTES;
  for (const part of parts)
    at += typeof part === 'string' ? message.write(part, at) : part.copy(message, at);
  // The inner digest as a string of one character per byte rather than a Buffer (see
  // hmacSha256Base64): 'binary' maps each byte to a character and back unchanged.
  const innerDigest = hash('sha256', message, 'binary');
  const block = Buffer.allocUnsafe(BLOCK_BYTES + DIGEST_BYTES);
  outer.copy(block);
  block.write(innerDigest, BLOCK_BYTES, 'binary');
  return block;
}

const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;

/** The key, padded to a block, XORed with 0x36 (inner) and 0x5c (outer). */
interface Pads {
  inner: Buffer;
  outer: Buffer;
}

/**
 * Pads of the keys in use. Keys given as Buffers are the decoded Standard Webhooks secrets, kept
 * by their scheme (a weak map, so they go with it); string keys are emptied when STRING_KEYS_KEPT
 * is reached, so that secrets replaced over time do not pile up.
 */
const padsOfBuffers = new WeakMap<Buffer, Pads>();
const padsOfStrings = new Map<string, Pads>();
const STRING_KEYS_KEPT = 1000;

function padsOf(key: string | Buffer): Pads {
  if (typeof key !== 'string') {
    let pads = padsOfBuffers.get(key);
    if (!pads) padsOfBuffers.set(key, (pads = makePads(key)));
    return pads;
  }
  let pads = padsOfStrings.get(key);
  if (!pads) {
    if (padsOfStrings.size >= STRING_KEYS_KEPT) padsOfStrings.clear();
    padsOfStrings.set(key, (pads = makePads(Buffer.from(key))));
  }
  return pads;
}

function makePads(key: Buffer): Pads {
  // A key longer than a block is replaced by its hash (RFC 2104, section 2).
  const block = key.length > BLOCK_BYTES ? hash('sha256', key, 'buffer') : key;
  const inner = Buffer.alloc(BLOCK_BYTES, 0x36);
  const outer = Buffer.alloc(BLOCK_BYTES, 0x5c);
  block.forEach((byte, i) => {
    inner[i] = 0x36 ^ byte;
    outer[i] = 0x5c ^ byte;
  });
  return { inner, outer };
}

import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha256, hmacSha256Base64 } from '../../../src/hooks/verify/hmac.js';

/** node:crypto's own HMAC, on the other side: every result must be its, byte for byte. */
function nodeHmac(key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

describe('hmacSha256 and hmacSha256Base64', () => {
  const body = Buffer.from('{"order":{"id":1,"total":"9.50","note":"crème brûlée"}}');

  it.each([
    ['an empty key', ''],
    ['a Standard Webhooks key (24 bytes)', randomBytes(24)],
    ['a key of exactly one block (64 bytes)', randomBytes(64)],
    ['a key one byte longer than a block, hashed first', randomBytes(65)],
    ['a long text secret', 'whsec-like-but-plain-'.repeat(8)],
    ['a text secret with characters outside ASCII', 'sécret-ключ-秘密'],
  ])('gives createHmac’s bytes for %s', (_name, key) => {
    expect(hmacSha256(key, 'msg_1.1732412345.', body)).toEqual(
      nodeHmac(key, 'msg_1.1732412345.', body),
    );
    expect(hmacSha256(key, body)).toEqual(nodeHmac(key, body));
    expect(hmacSha256(key, 'v0:1732412345:', 'ünïcode text', Buffer.alloc(0))).toEqual(
      nodeHmac(key, 'v0:1732412345:', 'ünïcode text', Buffer.alloc(0)),
    );
    expect(hmacSha256(key)).toEqual(nodeHmac(key));
    expect(hmacSha256Base64(key, 'msg_1.1732412345.', body)).toBe(
      nodeHmac(key, 'msg_1.1732412345.', body).toString('base64'),
    );
  });

  it('keeps every key apart, also past the number of text keys it remembers', () => {
    const keys = Array.from({ length: 1500 }, (_, i) => `secret-${i}`);
    for (const key of [...keys, ...keys.slice(0, 10)])
      expect(hmacSha256(key, body)).toEqual(nodeHmac(key, body));
    const bufferKey = randomBytes(32);
    const sameBytes = Buffer.from(bufferKey);
    expect(hmacSha256(bufferKey, body)).toEqual(hmacSha256(sameBytes, body));
  });
});

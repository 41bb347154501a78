import { createHmac, timingSafeEqual } from 'node:crypto';

/** Why a request's signature was refused: the `detail` of its `401 signature_invalid`. */
export class SignatureFailure extends Error {
  override name = 'SignatureFailure';
}

export const missingHeader = (name: string) =>
  new SignatureFailure(`The ${name} header is missing.`);

export const noSignatureMatched = (name: string) =>
  new SignatureFailure(
    `No signature in the ${name} header matches the body signed with this channel's secret.`,
  );

export function hmacSha256(key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

/**
 * Constant-time comparison of a received signature with the expected bytes. A signature of the
 * wrong length cannot match, and its length is no secret (it is fixed by the scheme).
 */
export function sameSignature(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Decodes hex or base64 text strictly: anything that is not exactly that encoding is no match. */
export function decodeSignature(text: string, encoding: 'hex' | 'base64'): Buffer {
  const valid =
    encoding === 'hex'
      ? /^(?:[0-9a-fA-F]{2})+$/.test(text)
      : /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text);
  return valid ? Buffer.from(text, encoding) : Buffer.alloc(0);
}

/**
 * A Unix timestamp (seconds) from a signature header, refused when it is further than
 * `toleranceS` from now in either direction, so a captured request cannot be replayed later.
 */
export function checkTimestamp(text: string, toleranceS: number, nowMs = Date.now()): number {
  if (!/^\d{1,15}$/.test(text.trim())) {
    throw new SignatureFailure(`The signature timestamp "${text.slice(0, 40)}" is not a number.`);
  }
  const timestamp = Number(text.trim());
  const skew = Math.abs(nowMs / 1000 - timestamp);
  if (skew > toleranceS) {
    throw new SignatureFailure(
      `The signature timestamp is ${Math.round(skew)} s away from now, outside the tolerance of ${toleranceS} s.`,
    );
  }
  return timestamp;
}

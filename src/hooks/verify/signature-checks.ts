import { timingSafeEqual } from 'node:crypto';

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

/**
 * Constant-time comparison of a received signature with the expected bytes. A signature of the
 * wrong length cannot match, and its length is no secret (it is fixed by the scheme).
 */
export function sameSignature(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Constant-time comparison of a received signature's text with the expected text, for schemes
 * whose reference implementation compares the encoded signatures (Standard Webhooks): no
 * decoding, and anything but exactly the expected text is no match.
 */
export function sameSignatureText(given: string, expected: string): boolean {
  const givenBytes = Buffer.from(given);
  const expectedBytes = Buffer.from(expected);
  return givenBytes.length === expectedBytes.length && timingSafeEqual(givenBytes, expectedBytes);
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
  const digits = text.trim();
  if (!/^\d{1,15}$/.test(digits)) {
    throw new SignatureFailure(`The signature timestamp "${text.slice(0, 40)}" is not a number.`);
  }
  const timestamp = Number(digits);
  const skew = Math.abs(nowMs / 1000 - timestamp);
  if (skew > toleranceS) {
    throw new SignatureFailure(
      `The signature timestamp is ${Math.round(skew)} s away from now, outside the tolerance of ${toleranceS} s.`,
    );
  }
  return timestamp;
}

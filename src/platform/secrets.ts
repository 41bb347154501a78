import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The credentials the service hands out and checks: webhook tokens, API keys, session cookies,
 * CSRF tokens. Only their SHA-256 is stored, so a copy of the database lets nobody in.
 */

/**
 * Hex SHA-256 of a secret: what is stored and looked up instead of the secret itself. The
 * one-shot `hash()`, since this runs for every webhook (on its URL's token), and a `createHash`
 * object per call cost more than the hashing.
 */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * Constant-time comparison of two secrets of any length: both are hashed first, so the time
 * taken says nothing about where they differ, nor about the expected secret's length.
 */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => hash('sha256', text, 'buffer');
  return given.length > 0 && timingSafeEqual(digest(given), digest(expected));
}

/** `bits` random bits (a multiple of 8), URL-safe base64. */
export function newToken(bits: number): string {
  return randomBytes(bits / 8).toString('base64url');
}

/**
 * A Standard Webhooks signing secret: `whsec_` and 32 random bytes in (standard) base64, as
 * that spec's libraries expect. Unlike the credentials above it is kept as it is: the service
 * signs with it.
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

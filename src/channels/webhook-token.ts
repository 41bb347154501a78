import { createHash, randomBytes } from 'node:crypto';

/** 192 random bits, URL-safe: the secret path segment of a channel's webhook URL. */
export function newWebhookToken(): string {
  return randomBytes(24).toString('base64url');
}

export function hashWebhookToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Anything else cannot be a token we issued, so it is refused before touching the database. */
export const WEBHOOK_TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;

import { newToken, sha256Hex } from '../platform/secrets.js';

/** 192 random bits, URL-safe: the secret path segment of a channel's webhook URL. */
export function newWebhookToken(): string {
  return newToken(192);
}

export function hashWebhookToken(token: string): string {
  return sha256Hex(token);
}

/** Anything else cannot be a token we issued, so it is refused before touching the database. */
export const WEBHOOK_TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,128}$/;

import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';

const unauthorized = () =>
  new AppError(
    401,
    'unauthorized',
    'Unauthorized',
    'Send a valid API key as "Authorization: Bearer <key>".',
    {
      'WWW-Authenticate': 'Bearer realm="hookprompt"',
    },
  );

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export interface ApiAuthOptions {
  db: Database;
  /** ADMIN_API_KEY: manages the default workspace. */
  adminApiKey: string | undefined;
  defaultWorkspaceId: string;
}

/** Resolves the bearer key to the workspace it manages and puts its id in `res.locals.workspaceId`. */
export function requireApiKey({
  db,
  adminApiKey,
  defaultWorkspaceId,
}: ApiAuthOptions): RequestHandler {
  const adminKeyHash = adminApiKey ? Buffer.from(sha256(adminApiKey), 'hex') : undefined;

  return async (req, res, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) throw unauthorized();
    const keyHash = sha256(match[1] as string);
    // Comparing digests in constant time: response time says nothing about the configured key.
    if (adminKeyHash && timingSafeEqual(adminKeyHash, Buffer.from(keyHash, 'hex'))) {
      res.locals.workspaceId = defaultWorkspaceId;
      return next();
    }
    const { rows } = await db.query<{ workspace_id: string }>(
      `update api_keys set last_used_at = now()
       where key_hash = $1 and revoked_at is null
       returning workspace_id`,
      [keyHash],
    );
    if (!rows[0]) throw unauthorized();
    res.locals.workspaceId = rows[0].workspace_id;
    next();
  };
}

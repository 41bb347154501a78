import type { RequestHandler } from 'express';
import { AppError } from '../platform/errors.js';
import { sha256Hex } from '../platform/secrets.js';
import type { ApiKeysService } from '../workspaces/api-keys-service.js';

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

/**
 * Resolves the bearer key to the workspace it manages and puts its id in `res.locals.workspaceId`
 * and the key's role in `res.locals.role`; `res.locals.caller` names the key (by its hash) for
 * what is counted per key.
 */
export function requireApiKey(apiKeys: ApiKeysService): RequestHandler {
  return async (req, res, next) => {
    const key = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const access = key ? await apiKeys.authenticate(key) : undefined;
    if (!key || !access) throw unauthorized();
    res.locals.workspaceId = access.workspaceId;
    res.locals.role = access.role;
    res.locals.caller = `api-key:${sha256Hex(key)}`;
    res.locals.actor = access.actor;
    next();
  };
}

import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import type { ApiKeysService } from './api-keys-service.js';
import { apiKeyCreateSchema } from './workspaces-schemas.js';

/**
 * `/api/v1/api-keys`: the workspace's management API keys, as its panel page has them. A key is
 * in the answer that creates it and nowhere else; lists show its first characters only.
 */
export function apiKeysRoutes(apiKeys: ApiKeysService): Router {
  const router = idRouter();

  router.get('/api-keys', async (_req, res) => {
    res.json({ data: await apiKeys.list(res.locals.workspaceId) });
  });

  router.post('/api-keys', async (req, res) => {
    const { name, role } = apiKeyCreateSchema.parse(req.body);
    const { key, apiKey } = await apiKeys.create(res.locals.workspaceId, name, role);
    res.set('Cache-Control', 'no-store');
    res.status(201).json({ ...apiKey, key });
  });

  // Revoked keys stay listed (with `revoked_at`), as in the panel; a request with one gets 401.
  router.delete('/api-keys/:keyId', async (req, res) => {
    await apiKeys.revoke(res.locals.workspaceId, req.params.keyId);
    res.status(204).end();
  });

  return router;
}

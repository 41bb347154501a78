import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import { DEFAULT_PROVIDER } from './provider-kinds.js';
import type { ProvidersService } from './providers-service.js';
import {
  createProviderSchema,
  testProviderSchema,
  updateProviderSchema,
} from './providers-schemas.js';

/** `/api/v1/providers`: the AI providers of the API key's workspace. */
export function providersRoutes(providers: ProvidersService): Router {
  const router = idRouter({ providerId: [DEFAULT_PROVIDER] });

  router.get('/providers', async (_req, res) => {
    res.json({ data: await providers.list(res.locals.workspaceId) });
  });

  router.post('/providers', async (req, res) => {
    const input = createProviderSchema.parse(req.body);
    res.status(201).json(await providers.create(res.locals.workspaceId, input));
  });

  router.get('/providers/:providerId', async (req, res) => {
    res.json(await providers.get(res.locals.workspaceId, req.params.providerId));
  });

  router.patch('/providers/:providerId', async (req, res) => {
    const id = req.params.providerId;
    const changes = updateProviderSchema.parse(req.body);
    res.json(await providers.update(res.locals.workspaceId, id, changes));
  });

  router.delete('/providers/:providerId', async (req, res) => {
    await providers.delete(res.locals.workspaceId, req.params.providerId);
    res.status(204).end();
  });

  router.post('/providers/:providerId/test', async (req, res) => {
    const id = req.params.providerId;
    const { model } = testProviderSchema.parse(req.body);
    // Unknown ids answer 404 before any call is made.
    await providers.get(res.locals.workspaceId, id);
    res.json(await providers.test(res.locals.workspaceId, id, model));
  });

  return router;
}

import { Router } from 'express';
import type { ProvidersService } from './providers-service.js';
import {
  createProviderSchema,
  providerId,
  testProviderSchema,
  updateProviderSchema,
} from './providers-schemas.js';

/** `/api/v1/providers`: the AI providers of the API key's workspace. */
export function providersRoutes(providers: ProvidersService): Router {
  const router = Router();

  router.get('/providers', async (_req, res) => {
    res.json({ data: await providers.list(res.locals.workspaceId) });
  });

  router.post('/providers', async (req, res) => {
    const input = createProviderSchema.parse(req.body);
    res.status(201).json(await providers.create(res.locals.workspaceId, input));
  });

  router.get('/providers/:id', async (req, res) => {
    res.json(await providers.get(res.locals.workspaceId, providerId(req.params.id)));
  });

  router.patch('/providers/:id', async (req, res) => {
    const id = providerId(req.params.id);
    const changes = updateProviderSchema.parse(req.body);
    res.json(await providers.update(res.locals.workspaceId, id, changes));
  });

  router.delete('/providers/:id', async (req, res) => {
    await providers.delete(res.locals.workspaceId, providerId(req.params.id));
    res.status(204).end();
  });

  router.post('/providers/:id/test', async (req, res) => {
    const id = providerId(req.params.id);
    const { model } = testProviderSchema.parse(req.body);
    // Unknown ids answer 404 before any call is made.
    await providers.get(res.locals.workspaceId, id);
    res.json(await providers.test(res.locals.workspaceId, id, model));
  });

  return router;
}

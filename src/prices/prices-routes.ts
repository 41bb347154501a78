import { Router } from 'express';
import { modelNameSchema, priceInputSchema } from './prices-schemas.js';
import type { PricesService } from './prices-service.js';

/** `/api/v1/prices`: the workspace's own prices per model; `{model}` is URL-encoded. */
export function pricesRoutes(prices: PricesService): Router {
  const router = Router();

  router.get('/prices', async (_req, res) => {
    res.json({ data: await prices.list(res.locals.workspaceId) });
  });

  router.put('/prices/:model', async (req, res) => {
    const model = modelNameSchema.parse(req.params.model);
    const input = priceInputSchema.parse(req.body);
    res.json(await prices.put(res.locals.workspaceId, model, input));
  });

  router.delete('/prices/:model', async (req, res) => {
    await prices.remove(res.locals.workspaceId, modelNameSchema.parse(req.params.model));
    res.status(204).end();
  });

  return router;
}

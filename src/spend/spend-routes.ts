import { Router } from 'express';
import { spendQuerySchema } from './spend-schemas.js';
import type { SpendService } from './spend-service.js';

/** `/api/v1/spend`: what the API key's workspace's AI calls cost, per day, model and channel. */
export function spendRoutes(spend: SpendService): Router {
  const router = Router();
  router.get('/spend', async (req, res) => {
    const query = spendQuerySchema.parse(req.query);
    res.json(await spend.report(res.locals.workspaceId, query));
  });
  return router;
}

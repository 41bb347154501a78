import { Router } from 'express';
import { usageQuerySchema } from './usage-schemas.js';
import type { UsageService } from './usage-service.js';

/** `/api/v1/usage`: tokens and events of the API key's workspace, per day or per channel. */
export function usageRoutes(usage: UsageService): Router {
  const router = Router();
  router.get('/usage', async (req, res) => {
    const query = usageQuerySchema.parse(req.query);
    res.json(await usage.report(res.locals.workspaceId, query));
  });
  return router;
}

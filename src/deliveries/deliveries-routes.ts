import { Router } from 'express';
import type { DeliveriesService } from './deliveries-service.js';

/** `/api/v1/channels/{id}/reply-secret`: the workspace comes from the API key. */
export function deliveriesRoutes(deliveries: DeliveriesService): Router {
  const router = Router();

  router.get('/channels/:id/reply-secret', async (req, res) => {
    res.json({ secret: await deliveries.replySecret(res.locals.workspaceId, req.params.id) });
  });

  router.post('/channels/:id/reply-secret/rotate', async (req, res) => {
    res.json({
      secret: await deliveries.rotateReplySecret(res.locals.workspaceId, req.params.id),
    });
  });

  return router;
}

import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import type { DeliveriesService } from './deliveries-service.js';

/** `/api/v1/channels/{id}/reply-secret`: the workspace comes from the API key. */
export function deliveriesRoutes(deliveries: DeliveriesService): Router {
  const router = idRouter();

  router.get('/channels/:channelId/reply-secret', async (req, res) => {
    res.json({
      secret: await deliveries.replySecret(res.locals.workspaceId, req.params.channelId),
    });
  });

  router.post('/channels/:channelId/reply-secret/rotate', async (req, res) => {
    res.json({
      secret: await deliveries.rotateReplySecret(res.locals.workspaceId, req.params.channelId),
    });
  });

  return router;
}

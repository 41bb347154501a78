import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import { createTrialSchema } from './trials-schemas.js';
import type { TrialsService } from './trials-service.js';

/** `/api/v1/channels/{id}/trials` and `/api/v1/trials/{id}`. */
export function trialsRoutes(trials: TrialsService): Router {
  const router = idRouter();

  router.post('/channels/:channelId/trials', async (req, res) => {
    const input = await createTrialSchema.parseAsync(req.body);
    const id = req.params.channelId;
    res.status(202).json(await trials.create(res.locals.workspaceId, id, input));
  });

  router.get('/channels/:channelId/trials', async (req, res) => {
    const id = req.params.channelId;
    res.json({ data: await trials.list(res.locals.workspaceId, id) });
  });

  router.get('/trials/:trialId', async (req, res) => {
    res.json(await trials.get(res.locals.workspaceId, req.params.trialId));
  });

  router.post('/trials/:trialId/cancel', async (req, res) => {
    res.json(await trials.cancel(res.locals.workspaceId, req.params.trialId));
  });

  router.post('/trials/:trialId/promote', async (req, res) => {
    res.json(await trials.promote(res.locals.workspaceId, req.params.trialId));
  });

  return router;
}

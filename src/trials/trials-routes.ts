import { Router } from 'express';
import { channelIdSchema } from '../channels/channels-schemas.js';
import { createTrialSchema, trialIdSchema } from './trials-schemas.js';
import type { TrialsService } from './trials-service.js';

/** `/api/v1/channels/{id}/trials` and `/api/v1/trials/{id}`. */
export function trialsRoutes(trials: TrialsService): Router {
  const router = Router();

  router.post('/channels/:id/trials', async (req, res) => {
    const input = await createTrialSchema.parseAsync(req.body);
    const id = rowId(channelIdSchema, req.params.id);
    res.status(202).json(await trials.create(res.locals.workspaceId, id, input));
  });

  router.get('/channels/:id/trials', async (req, res) => {
    const id = rowId(channelIdSchema, req.params.id);
    res.json({ data: await trials.list(res.locals.workspaceId, id) });
  });

  router.get('/trials/:id', async (req, res) => {
    res.json(await trials.get(res.locals.workspaceId, rowId(trialIdSchema, req.params.id)));
  });

  router.post('/trials/:id/cancel', async (req, res) => {
    res.json(await trials.cancel(res.locals.workspaceId, rowId(trialIdSchema, req.params.id)));
  });

  router.post('/trials/:id/promote', async (req, res) => {
    res.json(await trials.promote(res.locals.workspaceId, rowId(trialIdSchema, req.params.id)));
  });

  return router;
}

// An id that cannot exist answers like an unknown one: 404.
function rowId(schema: typeof channelIdSchema, raw: string | string[] | undefined): string {
  const parsed = schema.safeParse(raw);
  return parsed.success ? parsed.data : '0';
}

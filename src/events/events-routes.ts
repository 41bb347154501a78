import { Router } from 'express';
import { listEventsQuerySchema } from './events-schemas.js';
import type { EventsService } from './events-service.js';

/** `/api/v1/events`: Brain Logs for the workspace of the API key (`res.locals.workspaceId`). */
export function eventsRoutes(events: EventsService): Router {
  const router = Router();

  router.get('/events', async (req, res) => {
    const filter = listEventsQuerySchema.parse(req.query);
    res.json(await events.list(res.locals.workspaceId, filter));
  });

  router.get('/events/:id', async (req, res) => {
    res.json(await events.get(res.locals.workspaceId, String(req.params.id)));
  });

  return router;
}

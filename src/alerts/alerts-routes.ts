import { Router } from 'express';
import { alertId, createAlertSchema, updateAlertSchema } from './alert-schemas.js';
import type { AlertsService } from './alerts-service.js';

/** `/api/v1/alerts`: the alert rules of the API key's workspace, and its alert secret. */
export function alertsRoutes(alerts: AlertsService): Router {
  const router = Router();

  router.get('/alerts', async (_req, res) => {
    res.json({ data: await alerts.list(res.locals.workspaceId) });
  });

  router.post('/alerts', async (req, res) => {
    const input = createAlertSchema.parse(req.body);
    res.status(201).json(await alerts.create(res.locals.workspaceId, input));
  });

  // Before `/alerts/:id`, which would take `secret` for an id.
  router.get('/alerts/secret', async (_req, res) => {
    res.set('Cache-Control', 'no-store');
    res.json({ secret: await alerts.alertSecret(res.locals.workspaceId) });
  });

  router.get('/alerts/:id', async (req, res) => {
    res.json(await alerts.get(res.locals.workspaceId, alertId(req.params.id)));
  });

  router.patch('/alerts/:id', async (req, res) => {
    const changes = updateAlertSchema.parse(req.body);
    res.json(await alerts.update(res.locals.workspaceId, alertId(req.params.id), changes));
  });

  // One notification of type `alert.test`; `{ok: false, error}` when the target refused it.
  router.post('/alerts/:id/test', async (req, res) => {
    res.json(await alerts.test(res.locals.workspaceId, alertId(req.params.id)));
  });

  router.delete('/alerts/:id', async (req, res) => {
    await alerts.delete(res.locals.workspaceId, alertId(req.params.id));
    res.status(204).end();
  });

  return router;
}

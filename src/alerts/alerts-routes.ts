import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import { createAlertSchema, updateAlertSchema } from './alert-schemas.js';
import type { AlertsService } from './alerts-service.js';

/** `/api/v1/alerts`: the alert rules of the API key's workspace, and its alert secret. */
export function alertsRoutes(alerts: AlertsService): Router {
  const router = idRouter();

  router.get('/alerts', async (_req, res) => {
    res.json({ data: await alerts.list(res.locals.workspaceId) });
  });

  router.post('/alerts', async (req, res) => {
    const input = createAlertSchema.parse(req.body);
    res.status(201).json(await alerts.create(res.locals.workspaceId, input));
  });

  // Before `/alerts/:alertId`, which would take `secret` for an id.
  router.get('/alerts/secret', async (_req, res) => {
    res.set('Cache-Control', 'no-store');
    res.json({ secret: await alerts.alertSecret(res.locals.workspaceId) });
  });

  router.get('/alerts/:alertId', async (req, res) => {
    res.json(await alerts.get(res.locals.workspaceId, req.params.alertId));
  });

  router.patch('/alerts/:alertId', async (req, res) => {
    const changes = updateAlertSchema.parse(req.body);
    res.json(await alerts.update(res.locals.workspaceId, req.params.alertId, changes));
  });

  // One notification of type `alert.test`; `{ok: false, error}` when the target refused it.
  router.post('/alerts/:alertId/test', async (req, res) => {
    res.json(await alerts.test(res.locals.workspaceId, req.params.alertId));
  });

  router.delete('/alerts/:alertId', async (req, res) => {
    await alerts.delete(res.locals.workspaceId, req.params.alertId);
    res.status(204).end();
  });

  return router;
}

import { Router } from 'express';
import { workspacePatchSchema } from './workspaces-schemas.js';
import type { WorkspacesService } from './workspaces-service.js';

/** `/api/v1/workspace`: the workspace the API key manages. */
export function workspaceRoutes(workspaces: WorkspacesService): Router {
  const router = Router();

  router.get('/workspace', async (_req, res) => {
    res.json(await workspaces.get(res.locals.workspaceId));
  });

  router.patch('/workspace', async (req, res) => {
    const patch = workspacePatchSchema.parse(req.body);
    res.json(await workspaces.update(res.locals.workspaceId, patch));
  });

  return router;
}

import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import type { ToolsService } from './tools-service.js';
import { createToolSchema, testToolSchema, updateToolSchema } from './tool-schemas.js';

/** `/api/v1/tools`: the tools of the API key's workspace. */
export function toolsRoutes(tools: ToolsService): Router {
  const router = idRouter();

  router.get('/tools', async (_req, res) => {
    res.json({ data: await tools.list(res.locals.workspaceId) });
  });

  router.post('/tools', async (req, res) => {
    // An `http` tool's input schema is compiled off the event loop: parsed asynchronously.
    const input = await createToolSchema.parseAsync(req.body);
    res.status(201).json(await tools.create(res.locals.workspaceId, input));
  });

  router.get('/tools/:toolId', async (req, res) => {
    res.json(await tools.get(res.locals.workspaceId, req.params.toolId));
  });

  router.patch('/tools/:toolId', async (req, res) => {
    const id = req.params.toolId;
    const changes = await updateToolSchema.parseAsync(req.body);
    res.json(await tools.update(res.locals.workspaceId, id, changes));
  });

  router.delete('/tools/:toolId', async (req, res) => {
    await tools.delete(res.locals.workspaceId, req.params.toolId);
    res.status(204).end();
  });

  router.post('/tools/:toolId/test', async (req, res) => {
    const id = req.params.toolId;
    const { input } = testToolSchema.parse(req.body ?? {});
    res.json(await tools.test(res.locals.workspaceId, id, input));
  });

  return router;
}

import { Router } from 'express';
import type { ToolsService } from './tools-service.js';
import { createToolSchema, testToolSchema, toolId, updateToolSchema } from './tool-schemas.js';

/** `/api/v1/tools`: the tools of the API key's workspace. */
export function toolsRoutes(tools: ToolsService): Router {
  const router = Router();

  router.get('/tools', async (_req, res) => {
    res.json({ data: await tools.list(res.locals.workspaceId) });
  });

  router.post('/tools', async (req, res) => {
    // An `http` tool's input schema is compiled off the event loop: parsed asynchronously.
    const input = await createToolSchema.parseAsync(req.body);
    res.status(201).json(await tools.create(res.locals.workspaceId, input));
  });

  router.get('/tools/:id', async (req, res) => {
    res.json(await tools.get(res.locals.workspaceId, toolId(req.params.id)));
  });

  router.patch('/tools/:id', async (req, res) => {
    const id = toolId(req.params.id);
    const changes = await updateToolSchema.parseAsync(req.body);
    res.json(await tools.update(res.locals.workspaceId, id, changes));
  });

  router.delete('/tools/:id', async (req, res) => {
    await tools.delete(res.locals.workspaceId, toolId(req.params.id));
    res.status(204).end();
  });

  router.post('/tools/:id/test', async (req, res) => {
    const id = toolId(req.params.id);
    const { input } = testToolSchema.parse(req.body ?? {});
    res.json(await tools.test(res.locals.workspaceId, id, input));
  });

  return router;
}

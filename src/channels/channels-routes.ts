import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import type { ChannelsService } from './channels-service.js';
import { createChannelSchema, updateChannelSchema, versionSchema } from './channels-schemas.js';

/** `/api/v1/channels`: the workspace comes from the API key (`res.locals.workspaceId`). */
export function channelsRoutes(channels: ChannelsService): Router {
  const router = idRouter();

  router.post('/channels', async (req, res) => {
    const input = await createChannelSchema.parseAsync(req.body);
    res.status(201).json(await channels.create(res.locals.workspaceId, input));
  });

  router.get('/channels', async (_req, res) => {
    res.json({ data: await channels.list(res.locals.workspaceId) });
  });

  router.get('/channels/:channelId', async (req, res) => {
    res.json(await channels.get(res.locals.workspaceId, req.params.channelId));
  });

  router.patch('/channels/:channelId', async (req, res) => {
    const id = req.params.channelId;
    const changes = await updateChannelSchema.parseAsync(req.body);
    res.json(await channels.update(res.locals.workspaceId, id, changes));
  });

  router.delete('/channels/:channelId', async (req, res) => {
    await channels.delete(res.locals.workspaceId, req.params.channelId);
    res.status(204).end();
  });

  router.post('/channels/:channelId/regenerate-url', async (req, res) => {
    res.json(await channels.regenerateUrl(res.locals.workspaceId, req.params.channelId));
  });

  router.get('/channels/:channelId/versions', async (req, res) => {
    res.json({ data: await channels.versions(res.locals.workspaceId, req.params.channelId) });
  });

  router.post('/channels/:channelId/versions/:version/restore', async (req, res) => {
    const version = versionSchema.safeParse(req.params.version);
    const id = req.params.channelId;
    // A version that cannot exist answers like an unknown one: 404.
    res.json(
      await channels.restore(res.locals.workspaceId, id, version.success ? version.data : 0),
    );
  });

  return router;
}

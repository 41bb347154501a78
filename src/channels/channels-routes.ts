import { Router } from 'express';
import type { ChannelsService } from './channels-service.js';
import {
  channelIdSchema,
  createChannelSchema,
  updateChannelSchema,
  versionSchema,
} from './channels-schemas.js';

/** `/api/v1/channels`: the workspace comes from the API key (`res.locals.workspaceId`). */
export function channelsRoutes(channels: ChannelsService): Router {
  const router = Router();

  router.post('/channels', async (req, res) => {
    const input = await createChannelSchema.parseAsync(req.body);
    res.status(201).json(await channels.create(res.locals.workspaceId, input));
  });

  router.get('/channels', async (_req, res) => {
    res.json({ data: await channels.list(res.locals.workspaceId) });
  });

  router.get('/channels/:id', async (req, res) => {
    res.json(await channels.get(res.locals.workspaceId, channelId(req.params.id)));
  });

  router.patch('/channels/:id', async (req, res) => {
    const id = channelId(req.params.id);
    const changes = await updateChannelSchema.parseAsync(req.body);
    res.json(await channels.update(res.locals.workspaceId, id, changes));
  });

  router.delete('/channels/:id', async (req, res) => {
    await channels.delete(res.locals.workspaceId, channelId(req.params.id));
    res.status(204).end();
  });

  router.post('/channels/:id/regenerate-url', async (req, res) => {
    res.json(await channels.regenerateUrl(res.locals.workspaceId, channelId(req.params.id)));
  });

  router.get('/channels/:id/versions', async (req, res) => {
    res.json({ data: await channels.versions(res.locals.workspaceId, channelId(req.params.id)) });
  });

  router.post('/channels/:id/versions/:version/restore', async (req, res) => {
    const version = versionSchema.safeParse(req.params.version);
    const id = channelId(req.params.id);
    // A version that cannot exist answers like an unknown one: 404.
    res.json(
      await channels.restore(res.locals.workspaceId, id, version.success ? version.data : 0),
    );
  });

  return router;
}

// An id that cannot exist answers like any unknown channel: 404.
function channelId(raw: string | string[] | undefined): string {
  const parsed = channelIdSchema.safeParse(raw);
  return parsed.success ? parsed.data : '0';
}

import express, { Router } from 'express';
import { channelsRoutes } from '../channels/channels-routes.js';
import type { AppContext } from '../context.js';
import { eventsRoutes } from '../events/events-routes.js';
import { notFound } from '../errors.js';
import { workspaceRoutes } from '../workspaces/workspaces-routes.js';
import { requireApiKey } from './api-auth.js';

/** The management API under `/api/v1`: bearer-key auth, JSON in and out, problem+json errors. */
export function apiRouter(ctx: AppContext): Router {
  const router = Router();
  router.use(express.json({ limit: '1mb', type: ['application/json', 'application/*+json'] }));
  router.use(
    requireApiKey({
      db: ctx.db,
      adminApiKey: ctx.config.adminApiKey,
      defaultWorkspaceId: ctx.defaultWorkspaceId,
    }),
  );
  router.use(workspaceRoutes(ctx.workspaces));
  router.use(channelsRoutes(ctx.channels));
  router.use(eventsRoutes(ctx.events));
  for (const routes of ctx.extraApiRoutes) router.use(routes);
  router.use(() => {
    throw notFound('This API path');
  });
  return router;
}

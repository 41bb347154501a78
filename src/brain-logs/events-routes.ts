import type { Router } from 'express';
import type { DeliveriesService } from '../deliveries/deliveries-service.js';
import type { EventPages } from './event-pages.js';
import type { EventReader } from './event-reader.js';
import { exportEvents, EXPORT_TYPES } from './events-export.js';
import { filterConditions } from './events-filter.js';
import type { EventsReplay } from './events-replay.js';
import {
  parseExportQuery,
  parseListQuery,
  parseReplayBody,
  parseStreamQuery,
} from './events-schemas.js';
import type { LiveStreams } from './live-streams.js';
import { idRouter } from '../platform/ids.js';

export interface EventsRoutesDeps {
  reader: EventReader;
  pages: EventPages;
  replay: EventsReplay;
  streams: LiveStreams;
  deliveries: Pick<DeliveriesService, 'deliverAgain'>;
}

/** `/api/v1/events`: Brain Logs for the workspace of the API key (`res.locals.workspaceId`). */
export function eventsRoutes({
  reader,
  pages,
  replay,
  streams,
  deliveries,
}: EventsRoutesDeps): Router {
  const router = idRouter();

  router.get('/events', async (req, res) => {
    const filter = parseListQuery(req.query);
    res.json(await pages.list(res.locals.workspaceId, filter));
  });

  router.get('/events/export', async (req, res) => {
    const { format, filter } = parseExportQuery(req.query);
    const conditions = filterConditions(res.locals.workspaceId, filter);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    res.status(200);
    res.setHeader('Content-Type', EXPORT_TYPES[format]);
    res.setHeader('Content-Disposition', `attachment; filename="events-${stamp}.${format}"`);
    res.setHeader('Cache-Control', 'no-store');
    await exportEvents(reader, conditions, format, res);
    res.end();
  });

  router.get('/events/stream', async (req, res) => {
    const filter = parseStreamQuery(req.query);
    await streams.serve(req, res, {
      owner: res.locals.caller,
      conditions: filterConditions(res.locals.workspaceId, filter),
      message: async (row) => (await reader.present([row]))[0],
    });
  });

  router.post('/events/replay', async (req, res) => {
    const { dryRun, filter } = parseReplayBody(req.body);
    res.json(await replay.replayMatching(res.locals.workspaceId, filter, dryRun));
  });

  router.get('/events/:eventId', async (req, res) => {
    res.json(await reader.get(res.locals.workspaceId, req.params.eventId));
  });

  router.post('/events/:eventId/replay', async (req, res) => {
    res.status(202).json(await replay.replayOne(res.locals.workspaceId, req.params.eventId));
  });

  // The panel's "deliver again": the event must be the workspace's (404), its delivery failed or held (409).
  router.post('/events/:eventId/redeliver', async (req, res) => {
    const { workspaceId } = res.locals;
    const id = req.params.eventId;
    await reader.get(workspaceId, id);
    await deliveries.deliverAgain(workspaceId, id);
    res.status(202).json(await reader.get(workspaceId, id));
  });

  return router;
}

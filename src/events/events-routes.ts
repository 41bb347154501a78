import { Router } from 'express';
import { exportEvents, EXPORT_TYPES } from './events-export.js';
import type { EventsFeed } from './events-feed.js';
import type { EventsReplay } from './events-replay.js';
import {
  parseExportQuery,
  parseListQuery,
  parseReplayBody,
  parseStreamQuery,
} from './events-schemas.js';
import type { EventsService } from './events-service.js';

export interface EventsRoutesDeps {
  events: EventsService;
  replay: EventsReplay;
  feed: EventsFeed;
}

const HEARTBEAT_MS = 15_000;
const LAST_EVENT_ID = /^\d{1,19}$/;

/** `/api/v1/events`: Brain Logs for the workspace of the API key (`res.locals.workspaceId`). */
export function eventsRoutes({ events, replay, feed }: EventsRoutesDeps): Router {
  const router = Router();

  router.get('/events', async (req, res) => {
    const filter = parseListQuery(req.query);
    res.json(await events.list(res.locals.workspaceId, filter));
  });

  router.get('/events/export', async (req, res) => {
    const { format, filter } = parseExportQuery(req.query);
    const conditions = events.conditions(res.locals.workspaceId, filter);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    res.status(200);
    res.setHeader('Content-Type', EXPORT_TYPES[format]);
    res.setHeader('Content-Disposition', `attachment; filename="events-${stamp}.${format}"`);
    res.setHeader('Cache-Control', 'no-store');
    await exportEvents(events, conditions, format, res);
    res.end();
  });

  router.get('/events/stream', async (req, res) => {
    const filter = parseStreamQuery(req.query);
    const conditions = events.conditions(res.locals.workspaceId, filter);
    const lastId = req.get('Last-Event-ID')?.trim();
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      // Proxies such as nginx would otherwise hold messages back.
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 3000\n\n');
    const unsubscribe = await feed.subscribe(
      conditions,
      lastId && LAST_EVENT_ID.test(lastId) ? lastId : undefined,
      async (row) => {
        const [event] = await events.present([row]);
        res.write(`id: ${row.change_seq}\nevent: event\ndata: ${JSON.stringify(event)}\n\n`);
      },
      () => res.end(),
    );
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    res.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
    });
  });

  router.post('/events/replay', async (req, res) => {
    const { dryRun, filter } = parseReplayBody(req.body);
    res.json(await replay.replayMatching(res.locals.workspaceId, filter, dryRun));
  });

  router.get('/events/:id', async (req, res) => {
    res.json(await events.get(res.locals.workspaceId, String(req.params.id)));
  });

  router.post('/events/:id/replay', async (req, res) => {
    res.status(202).json(await replay.replayOne(res.locals.workspaceId, String(req.params.id)));
  });

  return router;
}

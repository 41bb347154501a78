import { Router } from 'express';
import { UNFINISHED_STATUSES } from '../events/event-states.js';
import type { PanelServices } from './panel-services.js';
import { eventView, LIST_TEXT_LIMIT, threadView } from './log-event-view.js';
import { workspaceId } from './panel-auth.js';
import { pathId } from './forms.js';
import { traceUrl } from '../tracing/tracing.js';

/**
 * The event page `/logs/{id}`, a permalink with everything the event holds (and what other
 * features add to it: headers, sender, delivery, thread) and the actions on it; and the
 * row fragment the live tail inserts into the list.
 */
export function eventPage(ctx: PanelServices): Router {
  const router = Router();

  const load = async (ws: string, rawId: unknown, limit: number) => {
    const event = await ctx.eventReader.get(ws, pathId(rawId, 'This event'));
    const channels = new Map((await ctx.channels.list(ws)).map((c) => [c.id, c]));
    return eventView(event, channels, limit);
  };

  router.get('/:id/row', async (req, res) => {
    const event = await load(workspaceId(res), req.params.id, LIST_TEXT_LIMIT);
    res.render('logs/event', { event, open: false });
  });

  router.get('/:id', async (req, res) => {
    const event = await load(workspaceId(res), req.params.id, Number.POSITIVE_INFINITY);
    const extra = event as unknown as Record<string, unknown>;
    const headers =
      extra.headers && typeof extra.headers === 'object'
        ? Object.entries(extra.headers as Record<string, string>)
        : [];
    const [deliveryAttempts, thread] = await Promise.all([
      event.delivery ? ctx.deliveries.attemptsOf(event.id) : [],
      ctx.eventThreads.around(workspaceId(res), event),
    ]);
    res.render('logs/show', {
      title: `Event #${event.id}`,
      event,
      deliveryAttempts,
      rawPayload: event.payload,
      headers,
      contentType: headers.find(([name]) => name === 'content-type')?.[1] ?? null,
      senderIp: typeof extra.sender_ip === 'string' ? extra.sender_ip : null,
      missing: Array.isArray(extra.missing) ? (extra.missing as string[]) : null,
      threadKey: typeof extra.thread_key === 'string' ? extra.thread_key : null,
      traceUrl: traceUrl(ctx.config.traceUrlTemplate, event.trace_id),
      thread: thread && threadView(thread, event.id),
      model: typeof extra.model === 'string' ? extra.model : null,
      history: event.history as Record<string, unknown>[],
      replayable: !(UNFINISHED_STATUSES as readonly string[]).includes(event.status),
    });
  });

  return router;
}

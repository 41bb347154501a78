import type { Router } from 'express';
import { UNFINISHED_STATUSES } from '../../events/event-states.js';
import { idRouter } from '../../platform/ids.js';
import type { PanelServices } from '../panel-services.js';
import {
  eventView,
  isSenderCheckRefusal,
  LIST_TEXT_LIMIT,
  rejectedReplyView,
  threadView,
  type EventView,
} from './log-event-view.js';
import { workspaceId } from '../panel-auth.js';
import { traceUrl } from '../../tracing/tracing.js';

/**
 * The event page `/logs/{id}`, a permalink with everything the event holds (and what other
 * features add to it: headers, sender, delivery, thread) and the actions on it; the row fragment
 * the live tail inserts into the list; and the detail fragment shown beside the list.
 */
export function eventPage(ctx: PanelServices): Router {
  const router = idRouter();

  const load = async (ws: string, id: string, limit: number) => {
    const event = await ctx.eventReader.get(ws, id);
    const [channelList, labels] = await Promise.all([
      ctx.channels.list(ws),
      // A row or a page names its destinations (the messages of an event with none need none).
      event.deliveries.length
        ? ctx.destinations.labels([event.channel_id])
        : new Map<string, string>(),
    ]);
    const channels = new Map(channelList.map((c) => [c.id, c]));
    return eventView(event, channels, limit, labels);
  };
  // The outcome's views (the page and the detail) add the exact refusal the sender got, and what
  // the model answered when its reply was refused as `reply_invalid`.
  const loadWhole = async (ws: string, id: string) => {
    const event = await load(ws, id, Number.POSITIVE_INFINITY);
    const { refusalDetail, rejectedReply } = await ctx.eventReader.panelNotes(ws, event);
    return { ...event, refusalDetail, rejectedReply: rejectedReplyView(event, rejectedReply) };
  };

  router.get('/:eventId/row', async (req, res) => {
    const event = await load(workspaceId(res), req.params.eventId, LIST_TEXT_LIMIT);
    res.render('logs/row', { event });
  });

  // Each destination's attempts, for the events that have messages to destinations.
  const destinationAttempts = (event: { id: string; deliveries: unknown[] }) =>
    event.deliveries.length ? ctx.deliveries.destinationAttemptsOf(event.id) : new Map();

  router.get('/:eventId/panel', async (req, res) => {
    const event = await loadWhole(workspaceId(res), req.params.eventId);
    const [deliveryAttempts, attemptsByDestination] = await Promise.all([
      event.delivery ? ctx.deliveries.attemptsOf(event.id) : [],
      destinationAttempts(event),
    ]);
    res.render('logs/detail', { event, deliveryAttempts, attemptsByDestination });
  });

  // The conversation the model is sent before the event's prompt, by its channel's History.
  const conversationOf = async (ws: string, event: EventView) => {
    if (event.thread_key === null || !event.channelExists) return { history: 0, turns: [] };
    const channel = (await ctx.channels.list(ws)).find((c) => c.id === event.channel_id);
    const history = channel?.ai.history ?? 0;
    return { history, turns: await ctx.eventThreads.turnsBefore(ws, event, history) };
  };

  router.get('/:eventId', async (req, res) => {
    const event = await loadWhole(workspaceId(res), req.params.eventId);
    const [deliveryAttempts, thread, attemptsByDestination, conversation] = await Promise.all([
      event.delivery ? ctx.deliveries.attemptsOf(event.id) : [],
      ctx.eventThreads.around(workspaceId(res), event),
      destinationAttempts(event),
      conversationOf(workspaceId(res), event),
    ]);
    res.render('logs/show', {
      title: `Event #${event.id}`,
      event,
      deliveryAttempts,
      attemptsByDestination,
      contentType: event.headers['content-type'] ?? null,
      senderIp: event.sender_ip,
      threadKey: event.thread_key,
      model: event.model,
      traceUrl: traceUrl(ctx.config.traceUrlTemplate, event.trace_id),
      thread: thread && threadView(thread, event.id),
      history: event.history as Record<string, unknown>[],
      conversation,
      replayable: !(UNFINISHED_STATUSES as readonly string[]).includes(event.status),
      // A refused request's replay is no everyday action: it skips the checks that refused it.
      replayRefused: event.status === 'rejected',
      skipsSenderChecks: event.status === 'rejected' && isSenderCheckRefusal(event.error),
    });
  });

  return router;
}

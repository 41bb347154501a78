import type { Response, Router } from 'express';
import { AppError } from '../../platform/errors.js';
import { idRouter } from '../../platform/ids.js';
import { exportEvents, EXPORT_TYPES } from '../../brain-logs/events-export.js';
import { filterConditions } from '../../brain-logs/events-filter.js';
import { toEventJson } from '../../events/event-object.js';
import type { PanelServices } from '../panel-services.js';
import { logsUrl, parseLogFilter } from './log-filters.js';
import { formField, signedIn, workspaceId } from '../panel-auth.js';

/**
 * What Brain Logs does besides showing: download a filter's events, follow them live, replay
 * one event or a filter's worth. The same services as the API, behind the panel's sign-in.
 */
export function logActions(ctx: PanelServices): Router {
  const router = idRouter();

  router.get('/export', async (req, res) => {
    const { filter } = parseLogFilter(req.query);
    const format = req.query.format === 'jsonl' ? 'jsonl' : 'csv';
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    res.setHeader('Content-Type', EXPORT_TYPES[format]);
    res.setHeader('Content-Disposition', `attachment; filename="brain-logs-${stamp}.${format}"`);
    res.setHeader('Cache-Control', 'no-store');
    const conditions = filterConditions(workspaceId(res), filter);
    await exportEvents(ctx.eventReader, conditions, format, res);
    res.end();
  });

  // The live tail of the page's filter, for public/logs.js.
  router.get('/stream', async (req, res) => {
    const { filter } = parseLogFilter(req.query);
    await ctx.liveStreams.serve(req, res, {
      owner: `session:${signedIn(res).session.id}`,
      conditions: filterConditions(workspaceId(res), filter),
      message: (row) => {
        // received_at: the chart's bar the event counts in.
        const { id, status, received_at } = toEventJson(row);
        return { id, status, received_at };
      },
    });
  });

  // Bulk replay asks first: how many events, and so how many chats, before anything happens.
  router.get('/replay', async (req, res) => {
    const { form, filter } = parseLogFilter(req.query);
    const { count } = await ctx.eventsReplay.replayMatching(workspaceId(res), filter, true);
    const workspace = await ctx.workspaces.get(workspaceId(res));
    res.render('logs/confirm-replay', {
      title: 'Replay events',
      form,
      count,
      chatsLeft: Math.max(0, workspace.chat_quota - workspace.chats_used),
      backUrl: logsUrl(form),
    });
  });

  router.post('/replay', async (req, res) => {
    const { form, filter } = parseLogFilter(req.body as Record<string, unknown>);
    await flashOutcome(ctx, res, async () => {
      const { count } = await ctx.eventsReplay.replayMatching(workspaceId(res), filter, false);
      return `${count.toLocaleString('en')} ${count === 1 ? 'event' : 'events'} sent to the AI again.`;
    });
    res.redirect(303, logsUrl(form));
  });

  router.post('/:eventId/replay', async (req, res) => {
    const id = req.params.eventId;
    await flashOutcome(ctx, res, async () => {
      await ctx.eventsReplay.replayOne(workspaceId(res), id);
      return `Event #${id} sent to the AI again; its earlier outcome is kept in its history.`;
    });
    const back = formField(req.body, 'back');
    res.redirect(303, back.startsWith('/logs') ? back : `/logs/${id}`);
  });

  // Approve or Deny, with a note, on the event (its page or the detail beside the list).
  router.post('/:eventId/approval', async (req, res) => {
    const id = req.params.eventId;
    const decision = formField(req.body, 'decision') === 'approve' ? 'approve' : 'deny';
    const note = formField(req.body, 'note');
    await flashOutcome(ctx, res, async () => {
      await ctx.approvals.decide(workspaceId(res), id, { decision, note });
      return decision === 'approve'
        ? `Event #${id}: the call is approved; the event goes on.`
        : `Event #${id}: the call is denied; the model is told so.`;
    });
    const back = formField(req.body, 'back');
    res.redirect(303, back.startsWith('/logs') ? back : `/logs/${id}`);
  });

  return router;
}

/** Runs an action and tells the admin how it went on the next page; refusals are said, not thrown. */
async function flashOutcome(
  ctx: PanelServices,
  res: Response,
  action: () => Promise<string>,
): Promise<void> {
  const session = signedIn(res).session;
  try {
    await ctx.sessions.flash(session, { kind: 'ok', text: await action() });
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    await ctx.sessions.flash(session, { kind: 'error', text: error.detail });
  }
}

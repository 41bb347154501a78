import { Router, type Response } from 'express';
import { updateChannelSchema } from '../channels/channels-schemas.js';
import { AppError } from '../platform/errors.js';
import { pathId } from './forms.js';
import { formField, signedIn, workspaceId } from './panel-auth.js';
import type { PanelServices } from './panel-services.js';

/**
 * The channel editor's "Where replies go" actions (reply URL, delivery on/off, secret rotation)
 * and Brain Logs' "deliver again". Each answers with a redirect and a one-line notice.
 */
export function replyPages(ctx: PanelServices): { channels: Router; logs: Router } {
  const router = Router();
  const logs = Router();

  const back = async (res: Response, to: string, kind: 'ok' | 'error', text: string) => {
    await ctx.sessions.flash(signedIn(res).session, { kind, text });
    res.redirect(303, to);
  };

  router.post('/:id/reply-url', async (req, res) => {
    const ws = workspaceId(res);
    const id = pathId(req.params.id, 'This channel');
    const to = `/channels/${id}#replies`;
    const url = formField(req.body, 'reply_url').trim();
    const parsed = updateChannelSchema.safeParse({ reply_delivery: { url: url || null } });
    if (!parsed.success)
      return back(res, to, 'error', `Reply URL not saved: it must be an http:// or https:// URL.`);
    try {
      await ctx.channels.update(ws, id, parsed.data);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      return back(
        res,
        to,
        'error',
        `Reply URL not saved: ${error.detail.replace(/^[\w.]+: /, '')}`,
      );
    }
    await back(
      res,
      to,
      'ok',
      url
        ? 'Reply URL saved: finished events are delivered there, signed with the reply secret.'
        : 'Reply URL removed: events are no longer delivered.',
    );
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    router.post(`/:id/reply-delivery/${action}`, async (req, res) => {
      const id = pathId(req.params.id, 'This channel');
      await ctx.channels.update(workspaceId(res), id, { reply_delivery: { enabled } });
      await back(
        res,
        `/channels/${id}#replies`,
        'ok',
        enabled
          ? 'Reply delivery on: held events go out now.'
          : 'Reply delivery off: finished events wait (held) until you turn it on again.',
      );
    });
  }

  router.post('/:id/reply-secret/rotate', async (req, res) => {
    const id = pathId(req.params.id, 'This channel');
    await ctx.deliveries.rotateReplySecret(workspaceId(res), id);
    await back(
      res,
      `/channels/${id}#replies`,
      'ok',
      'New reply secret made. For 24 hours messages are signed with both the new and the old one: update your receiver meanwhile.',
    );
  });

  logs.post('/:id/deliver-again', async (req, res) => {
    const id = pathId(req.params.id, 'This event');
    await ctx.deliveries.deliverAgain(workspaceId(res), id);
    await back(res, `/logs/${id}`, 'ok', 'The reply will be delivered again shortly.');
  });

  return { channels: router, logs };
}

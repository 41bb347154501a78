import type { Response, Router } from 'express';
import { updateChannelSchema } from '../../channels/channels-schemas.js';
import { AppError, notFound } from '../../platform/errors.js';
import { idRouter, isRowId } from '../../platform/ids.js';
import { randomUUID } from 'node:crypto';
import { sendToDestination } from '../../destinations/send-to-destination.js';
import { createTransportDeps } from '../../destinations/transport-deps.js';
import { channelEditor } from './channel-editor.js';
import {
  destinationErrors,
  destinationInputOf,
  postedDestinationForm,
  storedInputs,
} from './destination-form.js';
import { formField, signedIn, workspaceId } from '../panel-auth.js';
import type { PanelServices } from '../panel-services.js';

/**
 * The channel editor's "Where replies go" actions (reply URL, delivery on/off, secret rotation)
 * and Brain Logs' "deliver again". Each answers with a redirect and a one-line notice.
 */
export function replyPages(ctx: PanelServices): { channels: Router; logs: Router } {
  const router = idRouter();
  const logs = idRouter();

  const back = async (res: Response, to: string, kind: 'ok' | 'error', text: string) => {
    await ctx.sessions.flash(signedIn(res).session, { kind, text });
    res.redirect(303, to);
  };

  router.post('/:channelId/reply-url', async (req, res) => {
    const ws = workspaceId(res);
    const id = req.params.channelId;
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

  const editor = channelEditor(ctx);

  /** Adds a destination (`new`) or saves one, through the channels service as the API does. */
  const saved = ['/:channelId/destinations/new', '/:channelId/destinations/:destinationId'];
  router.post<{ channelId: string; destinationId?: string }>(saved, async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const key = req.params.destinationId ?? 'new';
    const form = postedDestinationForm(req.body, key);
    const list = storedInputs(channel.destinations);
    const index = key === 'new' ? list.length : list.findIndex((entry) => entry.id === key);
    if (index < 0) throw new AppError(404, 'not_found', 'Not found', 'This destination is gone.');
    const refuse = (errors: Record<string, string>) =>
      editor.show(
        res,
        channel,
        { name: channel.name, template: channel.template },
        { status: 400, errors, destinationForm: form },
      );
    const entry = destinationInputOf(form);
    if ('errors' in entry) return refuse(entry.errors);
    list[index] = entry.input;
    try {
      await ctx.channels.update(ws, channel.id, updateChannelSchema.parse({ destinations: list }));
    } catch (error) {
      return refuse(destinationErrors(error, form, index));
    }
    await back(
      res,
      `/channels/${channel.id}#destinations`,
      'ok',
      `Destination (${form.kind}) saved.`,
    );
  });

  router.post('/:channelId/destinations/:destinationId/remove', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const key = req.params.destinationId;
    const list = storedInputs(channel.destinations).filter((entry) => entry.id !== key);
    await ctx.channels.update(ws, channel.id, updateChannelSchema.parse({ destinations: list }));
    await back(res, `/channels/${channel.id}#destinations`, 'ok', 'Destination removed.');
  });

  /** Sends one message now, not through the queue, and says what the platform answered. */
  router.post('/:channelId/destinations/:destinationId/test', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const key = req.params.destinationId;
    const to = `/channels/${channel.id}#destination-${key}`;
    const destination = channel.destinations.find((entry) => entry.id === key);
    const sending = destination && (await ctx.destinations.forSending([key])).get(key);
    if (!sending) throw new AppError(404, 'not_found', 'Not found', 'This destination is gone.');
    const deps = createTransportDeps(ctx.config.delivery);
    try {
      const outcome = await sendToDestination(deps, sending.settings, {
        id: `msg_${randomUUID()}`,
        text: `Test message from hookprompt (channel “${channel.name}”).`,
        signingSecrets: [await ctx.deliveries.replySecret(ws, channel.id)],
      });
      if (outcome.outcome === 'delivered')
        return await back(res, to, 'ok', `Test message delivered (HTTP ${outcome.status}).`);
      const secret = sending.settings.secret;
      const said = secret ? outcome.error.replaceAll(secret, '••••••••') : outcome.error;
      const status = outcome.status === null ? '' : `HTTP ${outcome.status}, `;
      await back(res, to, 'error', `Test message not delivered: ${status}${said}.`);
    } finally {
      deps.close();
    }
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    router.post(`/:channelId/reply-delivery/${action}`, async (req, res) => {
      const id = req.params.channelId;
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

  router.post('/:channelId/reply-secret/rotate', async (req, res) => {
    const id = req.params.channelId;
    await ctx.deliveries.rotateReplySecret(workspaceId(res), id);
    await back(
      res,
      `/channels/${id}#replies`,
      'ok',
      'New reply secret made. For 24 hours messages are signed with both the new and the old one: update your receiver meanwhile.',
    );
  });

  logs.post('/:eventId/deliver-again', async (req, res) => {
    const id = req.params.eventId;
    const destination = (req.body as { destination_id?: unknown } | undefined)?.destination_id;
    const destinationId = typeof destination === 'string' && destination ? destination : undefined;
    if (destinationId !== undefined && !isRowId(destinationId)) throw notFound('This destination');
    await ctx.deliveries.deliverAgain(workspaceId(res), id, destinationId);
    const what = destinationId ? 'The message to that destination' : 'The reply';
    await back(res, `/logs/${id}`, 'ok', `${what} will be delivered again shortly.`);
  });

  return { channels: router, logs };
}

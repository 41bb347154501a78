import type { Router } from 'express';
import { createChannelSchema, updateChannelSchema } from '../../channels/channels-schemas.js';
import type { PanelServices } from '../panel-services.js';
import { ZodError } from 'zod';
import { parseAcceptWhenText } from './accept-when-form.js';
import { AppError, notFound } from '../../platform/errors.js';
import { idRouter, isRowId } from '../../platform/ids.js';
import { aiFormOf, parseAiForm } from './ai-form.js';
import { channelEditor } from './channel-editor.js';
import { trialPages } from './trial-pages.js';
import { dateTimeLocalValue } from '../format.js';
import { senderChangesOf, senderFieldErrors, senderFormFrom } from './sender-form.js';
import { fieldErrors, textareaText } from '../forms.js';
import { formField, signedIn, workspaceId } from '../panel-auth.js';

const STARTER_TEMPLATE =
  'New order {{order.id}} from {{customer.name}}: write a short, friendly confirmation.';

/** The Channels area: list, create, edit, enable/disable, regenerate the URL, delete. */
export function channelPages(ctx: PanelServices): Router {
  const router = idRouter();
  const editor = channelEditor(ctx);
  router.use((_req, res, next) => {
    res.locals.area = 'channels';
    next();
  });

  router.get('/', async (_req, res) => {
    const ws = workspaceId(res);
    const [channels, stats, days] = await Promise.all([
      ctx.channels.list(ws),
      ctx.channels.activity(ws),
      ctx.eventCounts.channelDays(ws),
    ]);
    const quiet = { hourly: Array.from({ length: 24 }, () => 0), total: 0, rejected: 0, failed: 0 };
    // "Events today" counts from midnight UTC; its link opens Brain Logs from the same instant.
    const now = new Date();
    const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    res.render('channels/index', {
      title: 'Channels',
      todayFrom: dateTimeLocalValue(midnight),
      channels: channels.map((channel) => ({
        ...channel,
        stats: stats.get(channel.id) ?? { eventsToday: 0, missingToday: 0, lastEventAt: null },
        day: days.get(channel.id) ?? quiet,
      })),
    });
  });

  router.get('/new', (_req, res) => {
    res.render('channels/new', {
      title: 'New channel',
      form: { name: '', template: STARTER_TEMPLATE, enabled: true },
      errors: {},
    });
  });

  router.post('/', async (req, res) => {
    const form = {
      name: formField(req.body, 'name'),
      template: textareaText(formField(req.body, 'template')),
      enabled: formField(req.body, 'enabled') === 'on',
    };
    const parsed = createChannelSchema.safeParse(form);
    if (!parsed.success) {
      return res
        .status(400)
        .render('channels/new', { title: 'New channel', form, errors: fieldErrors(parsed.error) });
    }
    const channel = await ctx.channels.create(workspaceId(res), parsed.data);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Channel “${channel.name}” created. Give its webhook URL to the sender, or send a test event below.`,
    });
    res.redirect(303, `/channels/${channel.id}`);
  });

  router.get('/:channelId', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    // "Use as the editor's sample payload" on an event page of Brain Logs.
    const sampleEvent = req.query.sample_event;
    if (typeof sampleEvent === 'string') {
      if (!isRowId(sampleEvent)) throw notFound('This event');
      const event = await ctx.eventReader.get(ws, sampleEvent);
      return editor.show(
        res,
        channel,
        { name: channel.name, template: channel.template, sample: event.payload },
        { previewNote: `The sample is the payload of event #${event.id}.` },
      );
    }
    // A channel that has received events starts from the last real payload, not a made-up one.
    const last = await editor.lastPayload(res, channel);
    await editor.show(
      res,
      channel,
      { name: channel.name, template: channel.template, ...(last ? { sample: last } : {}) },
      last ? { previewNote: 'The sample is the last payload this channel received.' } : {},
    );
  });

  router.post('/:channelId', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const form = editor.formOf(req.body, channel);
    const parsed = updateChannelSchema.safeParse({ name: form.name, template: form.template });
    const ai = await parseAiForm(form.ai ?? aiFormOf(channel.ai));
    const acceptWhen = parseAcceptWhenText(form.acceptWhen ?? '');
    if (!parsed.success || !ai.input || !acceptWhen.conditions) {
      const errors = {
        ...(parsed.success ? {} : fieldErrors(parsed.error)),
        ...ai.errors,
        ...(acceptWhen.error ? { accept_when: acceptWhen.error } : {}),
      };
      return editor.show(res, channel, form, { status: 400, errors });
    }
    try {
      await ctx.channels.update(ws, channel.id, {
        ...parsed.data,
        ai: ai.input,
        accept_when: acceptWhen.conditions,
      });
    } catch (error) {
      // A provider deleted (or renamed) since the editor was shown.
      if (!(error instanceof AppError) || error.code !== 'unknown_provider') throw error;
      return editor.show(res, channel, form, {
        status: 400,
        errors: { ai_provider: error.detail },
      });
    }
    await ctx.sessions.flash(signedIn(res).session, { kind: 'ok', text: 'Channel saved.' });
    res.redirect(303, `/channels/${channel.id}`);
  });

  router.post('/:channelId/preview', async (req, res) => {
    const channel = await ctx.channels.get(workspaceId(res), req.params.channelId);
    await editor.preview(req, res, channel);
  });

  router.post('/:channelId/senders', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const submitted = senderFormFrom(req.body);
    const refuse = (error: ZodError) =>
      editor.show(
        res,
        channel,
        { name: channel.name, template: channel.template },
        {
          status: 400,
          errors: senderFieldErrors(error),
          senderForm: submitted,
        },
      );
    const parsed = updateChannelSchema.safeParse(senderChangesOf(submitted));
    if (!parsed.success) return refuse(parsed.error);
    try {
      await ctx.channels.update(ws, channel.id, parsed.data);
    } catch (error) {
      if (error instanceof ZodError) return refuse(error);
      throw error;
    }
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: 'Sender settings saved: they apply to the next request.',
    });
    res.redirect(303, `/channels/${channel.id}#who-may-send`);
  });

  router.post('/:channelId/test', async (req, res) => {
    const channel = await ctx.channels.get(workspaceId(res), req.params.channelId);
    await editor.sendTestEvent(req, res, channel);
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    router.post(`/:channelId/${action}`, async (req, res) => {
      const channel = await ctx.channels.update(workspaceId(res), req.params.channelId, {
        enabled,
      });
      await ctx.sessions.flash(signedIn(res).session, {
        kind: 'ok',
        text: enabled
          ? 'Channel enabled: its webhook URL accepts events again.'
          : 'Channel disabled: senders now get 403 until you enable it again.',
      });
      res.redirect(303, `/channels/${channel.id}`);
    });
  }

  trialPages(router, ctx, editor);

  router.get('/:channelId/regenerate', async (req, res) => {
    const channel = await ctx.channels.get(workspaceId(res), req.params.channelId);
    res.render('channels/confirm-regenerate', {
      title: `Regenerate URL · ${channel.name}`,
      channel,
    });
  });

  router.post('/:channelId/regenerate', async (req, res) => {
    const channel = await ctx.channels.regenerateUrl(workspaceId(res), req.params.channelId);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: 'New webhook URL created. The old URL now answers 404: update every sender to the new one.',
    });
    res.redirect(303, `/channels/${channel.id}`);
  });

  router.get('/:channelId/delete', async (req, res) => {
    const channel = await ctx.channels.get(workspaceId(res), req.params.channelId);
    res.render('channels/confirm-delete', { title: `Delete · ${channel.name}`, channel });
  });

  router.post('/:channelId/delete', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    await ctx.channels.delete(ws, channel.id);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Channel “${channel.name}” deleted. Its URL answers 404; its events stay in Brain Logs.`,
    });
    res.redirect(303, '/channels');
  });

  return router;
}

import type { Router } from 'express';
import { z } from 'zod';
import { AI_SETTING_NAMES, mergeAiSettings, type AiSettingsInput } from '../../ai/ai-settings.js';
import type { Channel } from '../../channels/channels-service.js';
import { updateChannelSchema } from '../../channels/channels-schemas.js';
import { AppError } from '../../platform/errors.js';
import type { CandidateOutcome, StoredOutcome } from '../../trials/trial-outcomes.js';
import type { Trial } from '../../trials/trials-service.js';
import { aiFormOf, parseAiForm } from './ai-form.js';
import { RECENT_TRIAL_EVENTS, type channelEditor } from './channel-editor.js';
import { fieldErrors } from '../forms.js';
import { signedIn, workspaceId } from '../panel-auth.js';
import type { PanelServices } from '../panel-services.js';
import { fieldDiff, jsonObjects, wordDiff, type DiffPart, type FieldChange } from './reply-diff.js';

/** How many of the newest events "Try on recent events" asks (the API's bounds). */
const trialEventsSchema = z.coerce.number().int().min(1).max(100);

/** How much of each payload the trial page shows. */
const PAYLOAD_EXCERPT_CHARS = 400;

/** One row of the trial page: the payload's start, both outcomes, and how the replies differ. */
interface ResultView {
  eventId: string;
  payload: string;
  current: StoredOutcome;
  candidate: CandidateOutcome | null;
  words?: DiffPart[];
  fields?: FieldChange[];
}

/**
 * Trials in the channel editor: "Try on recent events" runs a trial of the unsaved edit, the
 * trial page shows it side by side with Promote and Discard; versions are restored from the
 * editor. Each is a form post: the pages work without JavaScript.
 */
export function trialPages(
  router: Router,
  ctx: PanelServices,
  editor: ReturnType<typeof channelEditor>,
): void {
  router.post('/:channelId/trials', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const form = editor.formOf(req.body, channel);
    const parsed = updateChannelSchema.safeParse({ template: form.template });
    const ai = await parseAiForm(form.ai ?? aiFormOf(channel.ai));
    const last = trialEventsSchema.safeParse(req.body?.trial_events ?? RECENT_TRIAL_EVENTS);
    if (!parsed.success || !ai.input || !last.success) {
      const errors = {
        ...(parsed.success ? {} : fieldErrors(parsed.error)),
        ...ai.errors,
        ...(last.success ? {} : { trial_events: 'A whole number of events from 1 to 100.' }),
      };
      return editor.show(res, channel, form, { status: 400, errors });
    }
    let trial: Trial;
    try {
      trial = await ctx.trials.create(ws, channel.id, {
        ...editedPrompt(channel, form.template, ai.input),
        events: { last: last.data },
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      const field = error.code === 'unknown_provider' ? 'ai_provider' : 'template';
      return editor.show(res, channel, form, { status: 400, errors: { [field]: error.detail } });
    }
    res.redirect(303, `/channels/${channel.id}/trials/${trial.id}`);
  });

  router.get('/:channelId/trials/:trialId', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const trial = await ctx.trials.get(ws, req.params.trialId);
    if (trial.channel_id !== channel.id) throw new AppError(404, 'not_found', 'Not found');
    const payloads = await ctx.trials.payloadExcerpts(ws, trial, PAYLOAD_EXCERPT_CHARS);
    res.render('channels/trial', {
      title: `Trial #${trial.id} · ${channel.name}`,
      channel,
      trial,
      results: (trial.results ?? []).map((result) => resultView(result, payloads)),
    });
  });

  router.post('/:channelId/trials/:trialId/promote', async (req, res) => {
    const ws = workspaceId(res);
    const id = req.params.trialId;
    const channel = await ctx.trials.promote(ws, id);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Trial #${id} promoted: the channel is now at version ${channel.version}.`,
    });
    res.redirect(303, `/channels/${channel.id}`);
  });

  router.post('/:channelId/trials/:trialId/discard', async (req, res) => {
    const ws = workspaceId(res);
    const trial = await ctx.trials.cancel(ws, req.params.trialId);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Trial #${trial.id} discarded: the channel is unchanged.`,
    });
    res.redirect(303, `/channels/${trial.channel_id}`);
  });

  router.post('/:channelId/versions/:version/restore', async (req, res) => {
    const ws = workspaceId(res);
    const channelId = req.params.channelId;
    const version = Number(/^[1-9]\d{0,8}$/.exec(String(req.params.version))?.[0] ?? 0);
    const channel = await ctx.channels.restore(ws, channelId, version);
    await ctx.sessions.flash(signedIn(res).session, {
      kind: 'ok',
      text: `Version ${version} restored: the channel is now at version ${channel.version}.`,
    });
    res.redirect(303, `/channels/${channel.id}#versions`);
  });
}

/**
 * The candidate of an edit: the template and the AI members that differ from the channel's, so
 * the trial shows what was changed (what is left out stays as the channel's current).
 */
function editedPrompt(
  channel: Channel,
  template: string,
  input: AiSettingsInput,
): { template?: string; ai?: AiSettingsInput } {
  const merged = mergeAiSettings(channel.ai, input);
  const changed = AI_SETTING_NAMES.filter(
    (name) => JSON.stringify(merged[name]) !== JSON.stringify(channel.ai[name]),
  );
  const ai = Object.fromEntries(changed.map((name) => [name, merged[name]])) as AiSettingsInput;
  return {
    ...(template === channel.template ? {} : { template }),
    ...(changed.length ? { ai } : {}),
  };
}

function resultView(
  result: NonNullable<Trial['results']>[number],
  payloads: ReadonlyMap<string, string>,
): ResultView {
  const view: ResultView = {
    eventId: result.event_id,
    payload: payloads.get(result.event_id) ?? '',
    current: result.current,
    candidate: result.candidate,
  };
  const before = result.current.reply;
  const after = result.candidate?.reply;
  if (before == null || after == null) return view;
  const objects = jsonObjects(before, after);
  if (objects) view.fields = fieldDiff(...objects);
  else view.words = wordDiff(before, after);
  return view;
}

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
import { prettyPayload } from '../pretty-json.js';
import { describeCondition } from '../../conditions/conditions.js';
import { changesAnything, promptChange } from './prompt-change.js';
import { NO_TRIAL_OPTIONS, parseTrialOptions } from './trial-options.js';
import type { CheckResult } from '../../trials/trial-checks.js';
import type { JudgeVerdict } from '../../trials/trial-judge.js';

/** How many of the newest events "Try on recent events" asks (the API's bounds). */
const trialEventsSchema = z.coerce.number().int().min(1).max(100);

/** How much of each payload the trial page shows (laid out when that much is whole JSON). */
const PAYLOAD_EXCERPT_CHARS = 4000;

/** One row of the trial page: the payload, both outcomes, and how the replies differ. */
interface ResultView {
  eventId: string;
  payload: string;
  current: StoredOutcome & { checks?: CheckResult[] };
  candidate: (CandidateOutcome & { checks?: CheckResult[] }) | null;
  judge?: JudgeVerdict;
  /** The candidate answered otherwise than the stored outcome (status or reply). */
  changed: boolean;
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
    const options = parseTrialOptions(form.trial ?? NO_TRIAL_OPTIONS);
    if (!parsed.success || !ai.input || !last.success || 'errors' in options) {
      const errors = {
        ...(parsed.success ? {} : fieldErrors(parsed.error)),
        ...ai.errors,
        ...(last.success ? {} : { trial_events: 'A whole number of events from 1 to 100.' }),
        ...('errors' in options ? options.errors : {}),
      };
      return editor.show(res, channel, form, { status: 400, errors });
    }
    let trial: Trial;
    try {
      trial = await ctx.trials.create(ws, channel.id, {
        ...editedPrompt(channel, form.template, ai.input),
        events: { last: last.data },
        ...options.options,
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      const judgeProvider = options.options.judge?.provider;
      const field =
        error.code !== 'unknown_provider'
          ? 'template'
          : judgeProvider && error.detail.includes(`"${judgeProvider}"`)
            ? 'trial_judge_provider'
            : 'ai_provider';
      return editor.show(res, channel, form, { status: 400, errors: { [field]: error.detail } });
    }
    res.redirect(303, `/channels/${channel.id}/trials/${trial.id}`);
  });

  router.get('/:channelId/trials/:trialId', async (req, res) => {
    const ws = workspaceId(res);
    const channel = await ctx.channels.get(ws, req.params.channelId);
    const trial = await ctx.trials.get(ws, req.params.trialId);
    if (trial.channel_id !== channel.id) throw new AppError(404, 'not_found', 'Not found');
    const [payloads, promoted] = await Promise.all([
      ctx.trials.payloadExcerpts(ws, trial, PAYLOAD_EXCERPT_CHARS),
      ctx.trials.promoted(ws, trial.id),
    ]);
    const change = promptChange({ template: channel.template, ai: channel.ai }, promoted);
    const results = (trial.results ?? []).map((result) => resultView(result, payloads));
    const changedOnly = req.query.changed === '1';
    res.render('channels/trial', {
      title: `Trial #${trial.id} · ${channel.name}`,
      channel,
      trial,
      change,
      changesAnything: changesAnything(change),
      changedOnly,
      changedCount: results.filter((result) => result.changed).length,
      checkLabels: (trial.checks ?? []).map(describeCondition),
      results: changedOnly ? results.filter((result) => result.changed) : results,
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
  const { current, candidate } = result;
  const view: ResultView = {
    eventId: result.event_id,
    payload: prettyPayload(payloads.get(result.event_id) ?? '').text,
    current,
    candidate,
    judge: result.judge,
    changed:
      candidate !== null &&
      (candidate.status !== current.status || candidate.reply !== current.reply),
  };
  const before = current.reply;
  const after = candidate?.reply;
  if (before == null || after == null) return view;
  const objects = jsonObjects(before, after);
  if (objects) view.fields = fieldDiff(...objects);
  else view.words = wordDiff(before, after);
  return view;
}

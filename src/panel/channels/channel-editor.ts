import type { Request, Response } from 'express';
import type { Channel, ChannelVersion } from '../../channels/channels-service.js';
import type { PanelServices } from '../panel-services.js';
import { isJsonObject, listPlaceholders, parsePayload, toJsonText } from '../../template/index.js';
import { acceptWhenText, parseAcceptWhenText } from './accept-when-form.js';
import { aiFormOf, postedAiForm, REDACTION_CHOICES, type AiForm } from './ai-form.js';
import { previewAi } from './ai-preview.js';
import { promptChange } from './prompt-change.js';
import { NO_TRIAL_OPTIONS, trialOptionsOf, type TrialOptionsForm } from './trial-options.js';
import { textareaText, type FieldErrors } from '../forms.js';
import { aboutSpan } from '../format.js';
import {
  destinationFormOf,
  FIELD_LABELS,
  isSecretField,
  KIND_FIELDS,
  type DestinationForm,
} from './destination-form.js';
import { DESTINATION_KINDS } from '../../destinations/destination-schemas.js';
import { KIND_NAMES } from '../../destinations/destination-label.js';
import { can, formField, workspaceId } from '../panel-auth.js';
import { SCHEME_CHOICES, SCHEME_FIELDS, senderFormOf, type SenderForm } from './sender-form.js';
import { imagePathsIn } from '../../attachments/image-sources.js';
import { previewTemplate, samplePayloadFor, type Preview } from './template-preview.js';

export interface EditorForm {
  name: string;
  template: string;
  /** The AI section; absent means the channel's saved settings. */
  ai?: AiForm;
  /** The sample payload for the preview and for test events; blank means "make one up". */
  sample?: string;
  /** `accept_when`, one condition a line; absent means the channel's saved conditions. */
  acceptWhen?: string;
  /** Checks and a judge for "Try on recent events"; absent means none. */
  trial?: TrialOptionsForm;
}

export interface TestOutcome {
  accepted: boolean;
  status: number;
  code: string | undefined;
  eventId: string | undefined;
}

interface EditorExtras {
  status?: number;
  errors?: FieldErrors;
  /** The "Who may send" form as submitted, when it is shown again with its errors. */
  senderForm?: SenderForm;
  testOutcome?: TestOutcome;
  previewNote?: string;
  /** A destination's form as submitted, when it is shown again with its errors. */
  destinationForm?: DestinationForm;
}

/** How many of the channel's recent events "Try on recent events" asks. */
export const RECENT_TRIAL_EVENTS = 20;

/** How many recent events are searched for the last payload that can serve as a sample. */
const RECENT_EVENTS = 20;

/** The channel editor page: settings, live template preview, test events and the sender guide. */
export function channelEditor(ctx: PanelServices) {
  const show = async (
    res: Response,
    channel: Channel,
    form: EditorForm,
    extras: EditorExtras = {},
  ) => {
    const sample = form.sample?.trim() ? form.sample : samplePayloadFor(form.template);
    const preview: Preview = previewTemplate(form.template, sample);
    const [replySecret, lastDelivery, providers, versions, trials, records, labels, last] =
      await Promise.all([
        // The reply secret is an editor's (as GET /api/v1/channels/{id}/reply-secret): a viewer's
        // page has none.
        can(res, 'POST', `/channels/${channel.id}/reply-secret/rotate`)
          ? ctx.deliveries.replySecret(workspaceId(res), channel.id)
          : undefined,
        ctx.deliveries.lastOfChannel(channel.id),
        ctx.providers.list(workspaceId(res)),
        ctx.channels.versions(workspaceId(res), channel.id),
        ctx.trials.list(workspaceId(res), channel.id),
        ctx.deliveries.destinationRecords(channel.id),
        ctx.destinations.labels([channel.id]),
        lastPayload(res, channel),
      ]);
    const example = samplePayloadFor(channel.template);
    const ai = form.ai ?? aiFormOf(channel.ai);
    const acceptWhen = form.acceptWhen ?? acceptWhenText(channel.accept_when);
    const parsedAcceptWhen = parseAcceptWhenText(acceptWhen).conditions ?? channel.accept_when;
    const aiPreview = previewAi(ai, sample, form.template, parsedAcceptWhen);
    res.status(extras.status ?? 200).render('channels/edit', {
      title: channel.name,
      channel,
      form: { ...form, ai, sample, acceptWhen, trial: form.trial ?? NO_TRIAL_OPTIONS },
      redactionChoices: REDACTION_CHOICES,
      aiPreview,
      providerNames: providers.map((provider) => provider.name),
      versions: versionsWithChanges(versions),
      trials: trials.slice(0, 10),
      recentTrialEvents: RECENT_TRIAL_EVENTS,
      errors: extras.errors ?? {},
      placeholders: listPlaceholders(form.template),
      imagePaths: imagePathsOf(last ?? sample),
      preview,
      previewNote: extras.previewNote,
      testOutcome: extras.testOutcome,
      curl: curlLine(channel.webhook_url, example),
      replies: {
        waitCurl: curlLine(`${channel.webhook_url}?wait=10`, example),
        fetchUrl: `${channel.webhook_url}/events/{event_id}`,
        secret: replySecret,
        lastDelivery,
        destinations: channel.destinations.map((destination) => ({
          ...destination,
          // Named by where it goes (destination-label.ts), as Brain Logs names it.
          name: labels.get(destination.id) ?? destination.kind,
          record: records.get(destination.id) ?? { recent: [], successRate: null },
          form:
            extras.destinationForm?.key === destination.id
              ? extras.destinationForm
              : destinationFormOf(destination),
        })),
        newDestination:
          extras.destinationForm?.key === 'new' ? extras.destinationForm : destinationFormOf(),
        kinds: DESTINATION_KINDS,
        kindFields: KIND_FIELDS,
        kindNames: KIND_NAMES,
        fieldLabels: FIELD_LABELS,
        isSecretField,
        retries: retriesOf(ctx.config.delivery.retryScheduleMs),
      },
      senderForm: extras.senderForm ?? senderFormOf(channel),
      schemeChoices: SCHEME_CHOICES,
      schemeFields: SCHEME_FIELDS,
    });
  };

  const formOf = (body: unknown, channel: Channel): EditorForm => {
    const fields = (body ?? {}) as Record<string, unknown>;
    const text = (name: string, fallback: string) => {
      const value = fields[name];
      return typeof value === 'string' ? textareaText(value) : fallback;
    };
    return {
      name: text('name', channel.name),
      template: text('template', channel.template),
      ai: postedAiForm(fields, aiFormOf(channel.ai)),
      sample: text('sample', ''),
      acceptWhen: text('accept_when', acceptWhenText(channel.accept_when)),
      trial: trialOptionsOf(text),
    };
  };

  /** The newest payload of this channel that is a JSON object, read through the Brain Logs service. */
  const lastPayload = async (res: Response, channel: Channel): Promise<string | undefined> => {
    const { data } = await ctx.eventPages.list(workspaceId(res), {
      channelId: channel.id,
      limit: RECENT_EVENTS,
    });
    return data.find((event) => {
      try {
        return isJsonObject(parsePayload(event.payload));
      } catch {
        return false;
      }
    })?.payload;
  };

  /** Shows the unsaved form again with its preview; nothing is stored. */
  const preview = async (req: Request, res: Response, channel: Channel) => {
    const form = formOf(req.body, channel);
    let previewNote: string | undefined;
    if (formField(req.body, 'source') === 'last') {
      const payload = await lastPayload(res, channel);
      if (payload === undefined) {
        previewNote = `No JSON object has been received on this channel in its last ${RECENT_EVENTS} events: the sample is unchanged.`;
      } else {
        form.sample = payload;
        previewNote = 'The sample is the last payload this channel received.';
      }
    }
    await show(res, channel, form, { previewNote });
  };

  /**
   * Sends the sample through the receiver exactly as a POST to the webhook URL would go, so the
   * disabled check, the quota and the recording in Brain Logs all apply. The saved template is used.
   */
  const sendTestEvent = async (req: Request, res: Response, channel: Channel) => {
    const form = formOf(req.body, channel);
    const sample = form.sample?.trim() ? form.sample : samplePayloadFor(channel.template);
    const receiving = await ctx.ingest.findChannelById(channel.id);
    if (!receiving) {
      const errors = { sample: 'The channel changed meanwhile; reload the page.' };
      return show(res, channel, form, { status: 409, errors });
    }
    const outcome = await ctx.ingest.receiveTestEvent(receiving, Buffer.from(sample, 'utf8'));
    const testOutcome: TestOutcome = outcome.accepted
      ? { accepted: true, status: 200, code: undefined, eventId: outcome.eventId }
      : {
          accepted: false,
          status: outcome.error.status,
          code: outcome.error.code,
          eventId: outcome.eventId,
        };
    ctx.log.info(
      { channelId: channel.id, eventId: outcome.eventId, accepted: outcome.accepted },
      'test event sent from the panel',
    );
    await show(res, channel, { ...form, sample }, { testOutcome });
  };

  return { show, formOf, preview, sendTestEvent, lastPayload };
}

/** The paths of image URLs in a payload, offered for `ai.images`; none when it is not JSON. */
function imagePathsOf(payload: string): string[] {
  try {
    return imagePathsIn(parsePayload(payload));
  } catch {
    return [];
  }
}

/** A copy-and-paste command that sends one event; single quotes keep the shell out of the JSON. */
export function curlLine(url: string, samplePayload: string): string {
  const compact = toJsonText(parsePayload(samplePayload));
  const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  return `curl -X POST ${quote(url)} -H 'Content-Type: application/json' -d ${quote(compact)}`;
}

/** How long and how often a failed delivery is tried again, as DELIVERY_RETRY_SCHEDULE says. */
function retriesOf(scheduleMs: readonly number[]): { during: string; attempts: number } {
  const total = scheduleMs.reduce((sum, wait) => sum + wait, 0);
  return { during: aboutSpan(total), attempts: scheduleMs.length + 1 };
}

/**
 * Each version with what changed from the version before it (the next one in the list, which is
 * newest first): the names of what changed, and the change as the trial page shows it.
 */
function versionsWithChanges(versions: readonly ChannelVersion[]) {
  return versions.map((version, i) => {
    const previous = versions[i + 1];
    if (!previous || previous.version !== version.version - 1) return { ...version };
    const change = promptChange(previous, version);
    const changed = [
      ...(change.template ? ['Template'] : []),
      ...change.ai.map((member) => member.label),
    ];
    return { ...version, change, changed };
  });
}

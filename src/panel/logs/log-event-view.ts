import { REPLY_INVALID } from '../../ai/reply-check.js';
import type { Channel } from '../../channels/channels-service.js';
import type { EventJson } from '../../events/event-object.js';
import type { EventPreview } from '../../brain-logs/event-pages.js';
import type { ThreadAround, ThreadEvent } from '../../brain-logs/events-thread.js';
import { refusal } from '../format.js';
import { prettyPayload } from '../pretty-json.js';
import { targetName, targetsSummary, type TargetsSummary } from './delivery-summary.js';

/**
 * The list reads only the start of each text: a row shows one line of reply or error, and the
 * detail beside it (or the event's own page) reads the whole event.
 */
export const LIST_TEXT_LIMIT = 200;
/** The list's outcome column: one line of reply or error, enough to recognise it. */
const OUTCOME_LENGTH = LIST_TEXT_LIMIT;

export interface EventView extends EventJson {
  channelName: string;
  /** False for a deleted channel: its events stay, its page is gone. */
  channelExists: boolean;
  payloadText: string;
  payloadIsJson: boolean;
  /** Why a refused or filtered event got no reply, in words, for its outcome. */
  reason: string | null;
  /** The whole payload's size in bytes, as stored: for a preview too, not the preview's. */
  sizeBytes: number;
  /** The request headers by name, sorted for reading. */
  headerList: [string, string][];
  /** The list's one line: the reply, or why there is none (`isError` draws it in red). */
  outcome: { text: string; isError: boolean };
  /** The reply laid out when it is JSON (a schema reply), else as the AI wrote it. */
  replyText: string | null;
  replyIsJson: boolean;
  /** The Delivery cell: every target's message summed up; null when the event has none. */
  targets: TargetsSummary | null;
  /** The messages to destinations, each with its destination's name. */
  deliveries: (EventJson['deliveries'][number] & { name: string })[];
  /** The tool calls of the outcome, their arguments laid out when they are JSON. */
  toolCallViews: ToolCallView[];
  /** The call the event waits with for an operator's decision; null unless it waits. */
  approvalView: ApprovalView | null;
}

/** The call an event waits with, as the outcome shows it above Approve and Deny. */
export interface ApprovalView {
  tool: string;
  /** As the tool would get them, laid out when they are JSON. */
  argumentsText: string;
  requestedAt: string;
  expiresAt: string;
}

/** One tool call as the outcome shows it. */
export interface ToolCallView {
  round: number;
  tool: string;
  status: string;
  httpStatus: number | null;
  latencyMs: number | null;
  argumentsText: string;
  result: string;
}

/** `labels`: the names of the destinations of the event's channel, by id (destination-label.ts). */
export function eventView(
  event: EventJson | EventPreview,
  channels: Map<string, Channel>,
  limit: number,
  labels: ReadonlyMap<string, string> = new Map(),
): EventView {
  const channelName =
    channels.get(event.channel_id)?.name ?? `Deleted channel #${event.channel_id}`;
  const tooLong = (text: string | null) => text !== null && text.length > limit;
  const shorten = (text: string | null) =>
    text !== null && text.length > limit ? `${text.slice(0, limit)}…` : text;
  // A payload that is cut is no longer JSON: it is shown as received, up to the limit.
  const reply = shorten(event.reply);
  const laidOut = reply !== null && !tooLong(event.reply) ? prettyPayload(reply) : null;
  const payload = tooLong(event.payload)
    ? { text: shorten(event.payload) as string, isJson: false }
    : prettyPayload(event.payload);
  return {
    ...event,
    prompt: shorten(event.prompt),
    reply,
    channelName,
    channelExists: channels.has(event.channel_id),
    payloadText: payload.text,
    payloadIsJson: payload.isJson,
    reason: reasonOf(event),
    sizeBytes:
      'payload_bytes' in event ? event.payload_bytes : Buffer.byteLength(event.payload, 'utf8'),
    headerList: Object.entries(event.headers).sort(([a], [b]) => a.localeCompare(b)),
    outcome: outcomeOf(event),
    replyText: laidOut?.isJson ? laidOut.text : reply,
    replyIsJson: laidOut?.isJson ?? false,
    targets: targetsSummary(event, labels),
    deliveries: event.deliveries.map((d) => ({
      ...d,
      name: targetName(labels, d.destination_id, d.kind),
    })),
    toolCallViews: (event.tool_calls ?? []).map((call) => ({
      round: call.round,
      tool: call.tool,
      status: call.status,
      httpStatus: call.http_status,
      latencyMs: call.latency_ms,
      argumentsText: prettyPayload(call.arguments).text,
      result: call.result,
    })),
    approvalView: event.approval
      ? {
          tool: event.approval.tool,
          argumentsText: prettyPayload(event.approval.arguments).text,
          requestedAt: event.approval.requested_at,
          expiresAt: event.approval.expires_at,
        }
      : null,
  };
}

/** What the model answered when its reply was refused, shown under the event's error. */
export interface RejectedReplyView {
  /** Why it was refused, as the call that refused it says (without `reply_invalid: `). */
  reason: string;
  /** Laid out when it is JSON (of the wrong shape), else as the model wrote it. */
  text: string;
  isJson: boolean;
}

export function rejectedReplyView(
  event: EventJson,
  answer: string | null,
): RejectedReplyView | null {
  if (answer === null) return null;
  const prefix = `${REPLY_INVALID}: `;
  // The last refused call names the reason alone; the event's error may add "Gave up after …".
  const refused = event.calls.findLast((call) => call.error?.startsWith(prefix));
  const error = refused?.error ?? event.error ?? '';
  const laidOut = prettyPayload(answer);
  return {
    reason: error.startsWith(prefix) ? error.slice(prefix.length) : error,
    text: laidOut.text,
    isJson: laidOut.isJson,
  };
}

const oneLine = (text: string) => text.slice(0, OUTCOME_LENGTH).replace(/\s+/g, ' ').trim();

/** What became of the event, on one line of the list: its reply, or the error that stands instead. */
function outcomeOf(event: EventJson | EventPreview): { text: string; isError: boolean } {
  if (event.status === 'rejected') return { text: refusalLine(event.error), isError: true };
  if (event.status === 'filtered') return { text: reasonOf(event) as string, isError: false };
  if (event.reply !== null) return { text: oneLine(event.reply), isError: false };
  if (event.error !== null) return { text: oneLine(event.error), isError: true };
  if (event.status === 'skipped') return { text: 'The prompt rendered empty', isError: false };
  return { text: 'Waiting for the AI', isError: false };
}

/** The refusals of the checks on who sent a request: its signature, its address, its origin. */
const SENDER_CHECK_REFUSALS: readonly string[] = [
  'signature_invalid',
  'sender_not_allowed',
  'origin_not_allowed',
];

export const isSenderCheckRefusal = (code: string | null) =>
  code !== null && SENDER_CHECK_REFUSALS.includes(code);

/** A refusal's code in words, without the advice the event's own page gives. */
function refusalLine(code: string | null): string {
  return (code ?? 'refused').replace(/_/g, ' ');
}

/** An event of the thread section of the event page. */
export interface ThreadItemView extends ThreadEvent {
  /** The event whose page this is. */
  current: boolean;
  /** The reply (or else the error) on one line, as far as it was read. */
  preview: string;
  /** The preview is the error, not a reply. */
  previewIsError: boolean;
}

/** The thread section: its events as shown, and whether the thread goes on either side. */
export interface ThreadSectionView extends ThreadAround {
  events: ThreadItemView[];
}

export function threadView(thread: ThreadAround, currentId: string): ThreadSectionView {
  return {
    ...thread,
    events: thread.events.map((item) => {
      const text = item.reply ?? item.error ?? '';
      return {
        ...item,
        current: item.id === currentId,
        preview: text.replace(/\s+/g, ' ').trim(),
        previewIsError: item.reply === null && item.error !== null,
      };
    }),
  };
}

/** Why the event got no reply, on one line: a refusal, or the accept_when condition that did not hold. */
function reasonOf(event: EventJson | EventPreview): string | null {
  if (event.status === 'rejected') return refusal(event.error);
  if (event.status === 'filtered') return `Filtered: ${event.error ?? 'accept_when'} did not hold`;
  return null;
}

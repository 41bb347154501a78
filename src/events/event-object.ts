import type { TokenUsage } from '../ai/ai-provider.js';
import type { AiCall } from '../ai/fallback-runner.js';
import type { EventStatus } from './event-states.js';
import type { EventApproval, EventRow, EventToolCall } from './event-row.js';
import type { Attachment } from '../attachments/event-attachments.js';

/** An event as the API and Brain Logs show it. */
export interface EventJson {
  id: string;
  channel_id: string;
  received_at: string;
  status: EventStatus;
  /** The request body exactly as received (for a refused request, its first 64 KB). */
  payload: string;
  /** A refused request's body was longer than what `payload` keeps. */
  payload_truncated: boolean;
  prompt: string | null;
  reply: string | null;
  error: string | null;
  attempts: number;
  completed_at: string | null;
  /** The request's headers, lower-case names, credentials shown as "[redacted]". */
  headers: Record<string, string>;
  /** The sender's address as the receiver saw it (TRUST_PROXY applied). */
  sender_ip: string | null;
  /** Later requests with this event's dedup key, answered with this event instead of stored. */
  duplicates: number;
  /** Where the reply delivery of the event stands; null when its channel had no reply URL. */
  delivery: EventDelivery | null;
  /** Where the messages to the channel's destinations stand, one per destination. */
  deliveries: DestinationDelivery[];
  /**
   * The provider (by name) and model of the call whose answer was kept (of the last call made
   * when none was); null before any call.
   */
  provider: string | null;
  model: string | null;
  /** Tokens of the call whose answer was kept, as the provider reported them, or null. */
  usage: TokenUsage | null;
  /** Every AI call of the current outcome, fallbacks included, oldest first: the last 20. */
  calls: AiCall[];
  /** The tool calls of the current outcome, oldest first: the last 50. */
  tool_calls: EventToolCall[];
  /** The images the payload named at the channel's `ai.images` paths, and what became of each. */
  attachments: Attachment[];
  /**
   * The tool call the event waits for an operator's decision on (`awaiting_approval`): the tool,
   * its arguments as the tool would get them, when it was asked and when the wait times out.
   */
  approval: EventApproval | null;
  /** How long the last successful AI call took, in milliseconds. */
  latency_ms: number | null;
  /**
   * What the calls of the current outcome cost in USD: the sum of those whose cost is known;
   * null when none is.
   */
  cost_usd: number | null;
  /** The rendered thread key; null when the event is in no thread. */
  thread_key: string | null;
  /** The channel version its current outcome was rendered with; null before and when rejected. */
  version: number | null;
  /** Placeholders of the template and system prompt that were absent or null in the payload. */
  missing: string[];
  /** The last AI call sent less than was rendered: cut to AI_MAX_INPUT_CHARS. */
  input_truncated: boolean;
  /** `{kind: distinct values}` replaced by placeholders in what was sent; null without redaction. */
  redactions: Record<string, number> | null;
  /**
   * Earlier outcomes, oldest first, kept when the event was replayed: the last 20, each text
   * cut to its first 10,000 characters and `…[truncated]`.
   */
  history: unknown[];
  /** The OpenTelemetry trace of the event (32 hex digits); null when it was not traced. */
  trace_id: string | null;
  /** The event whose reply the reply cache gave this one, without a call; null when asked. */
  cached_from: string | null;
}

/** An event's reply delivery as the API shows it (see src/deliveries/). */
export interface EventDelivery {
  status: 'pending' | 'delivered' | 'failed' | 'held';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

/** An event's message to one destination as the API shows it (see src/destinations/). */
export interface DestinationDelivery {
  destination_id: string;
  kind: string;
  status: 'pending' | 'delivered' | 'failed' | 'skipped' | 'held';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

/** An event's reply delivery (if its channel had a reply URL) and its destinations' messages. */
export interface EventDeliveries {
  delivery?: EventDelivery;
  deliveries: DestinationDelivery[];
}

/**
 * An event as the API shows it. Its deliveries are given by the caller that has them: reply
 * delivery reads events (its messages carry them), so events never read deliveries.
 */
export function toEventJson(row: EventRow, found?: EventDeliveries): EventJson {
  return {
    id: row.id,
    channel_id: row.channel_id,
    received_at: new Date(row.received_at).toISOString(),
    status: row.status as EventStatus,
    payload: restoreByteOrderMark(row.payload, row.payload_bytes),
    payload_truncated: row.payload_truncated,
    prompt: row.prompt,
    reply: row.reply,
    error: row.error,
    attempts: row.attempts,
    completed_at: row.completed_at ? new Date(row.completed_at).toISOString() : null,
    headers: row.headers ?? {},
    sender_ip: row.sender_ip,
    duplicates: row.duplicates,
    delivery: found?.delivery ?? null,
    deliveries: found?.deliveries ?? [],
    provider: row.provider,
    model: row.model,
    usage: row.usage,
    calls: row.calls ?? [],
    tool_calls: row.tool_calls ?? [],
    attachments: row.attachments ?? [],
    approval: row.approval ?? null,
    latency_ms: row.latency_ms,
    cost_usd: row.cost_usd,
    thread_key: row.thread_key,
    version: row.version ?? null,
    missing: row.missing ?? [],
    input_truncated: row.input_truncated,
    redactions: row.redactions ?? null,
    history: row.history,
    trace_id: row.trace_id ?? null,
    cached_from: row.cached_from ?? null,
  };
}

/**
 * The embedded database's driver decodes each text value with a TextDecoder that drops a UTF-8
 * byte-order mark at its start; a payload is kept byte for byte, so the mark is put back when
 * the stored size says one was there.
 */
function restoreByteOrderMark(payload: string, storedBytes: number): string {
  return Number(storedBytes) === Buffer.byteLength(payload) + 3 ? `\uFEFF${payload}` : payload;
}

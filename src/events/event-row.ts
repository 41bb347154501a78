import type { TokenUsage } from '../ai/ai-provider.js';
import type { AiCall } from '../ai/fallback-runner.js';
import type { Attachment } from '../attachments/event-attachments.js';

/** One tool call of an event as stored and shown (`tool_calls`). */
export interface EventToolCall {
  round: number;
  tool: string;
  arguments: string;
  status: string;
  http_status: number | null;
  latency_ms: number | null;
  result: string;
}

/** The call an event waits with (`awaiting_approval`), as stored and shown. */
export interface EventApproval {
  tool: string;
  /** As the tool would get them (placeholders put back). */
  arguments: string;
  requested_at: string;
  expires_at: string;
}

/** An event as stored, as every statement that selects EVENT_COLUMNS returns it. */
export interface EventRow {
  id: string;
  channel_id: string;
  received_at: Date;
  /** received_at with microseconds, in UTC: what a cursor is made of. */
  received_at_exact: string;
  status: string;
  payload: string;
  /** The payload's size as stored, in bytes (see restoreByteOrderMark in event-object.ts). */
  payload_bytes: number;
  payload_truncated: boolean;
  prompt: string | null;
  reply: string | null;
  error: string | null;
  attempts: number;
  completed_at: Date | null;
  headers: Record<string, string> | null;
  sender_ip: string | null;
  duplicates: number;
  provider: string | null;
  model: string | null;
  usage: TokenUsage | null;
  calls: AiCall[];
  /** The tool calls of the current outcome (src/worker/tool-rounds.ts), oldest first. */
  tool_calls?: EventToolCall[];
  /** The images the payload named and what became of each (src/attachments/). */
  attachments?: Attachment[];
  /** The tool call the event waits for an operator's decision on; null unless it waits. */
  approval?: EventApproval | null;
  latency_ms: number | null;
  /** USD, as float8 (stored as an exact numeric). */
  cost_usd: number | null;
  thread_key: string | null;
  /** The channel version its current outcome was rendered with (null before, and when rejected). */
  version: number | null;
  missing: string[] | null;
  input_truncated: boolean;
  /** `{kind: distinct values}` the guardrails redacted in what was sent; null without redaction. */
  redactions: Record<string, number> | null;
  /** Earlier outcomes of a replayed event, oldest first. */
  history: unknown[];
  /** The event its reply was served from by the reply cache (src/reply-cache/); null when asked. */
  cached_from: string | null;
  /** The event's trace (src/tracing/), when it was traced and sampled. */
  trace_id: string | null;
  /** Its place in the live tail (Last-Event-ID). */
  change_seq: string;
}

/**
 * The columns of an EventRow. Brain Logs reads the events table with statements of its own (the
 * indexes of its filters are its own), and returns the same rows.
 */
export const EVENT_COLUMNS = `id, channel_id, received_at, status, payload, octet_length(payload) as payload_bytes,
  payload_truncated, prompt, reply, error, attempts, completed_at, headers, sender_ip, duplicates,
  provider, model, usage, calls, tool_calls, attachments, approval, latency_ms, cost_usd::float8 as cost_usd, thread_key, version,
  missing, input_truncated, redactions, history, change_seq, trace_id, cached_from,
  to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as received_at_exact`;

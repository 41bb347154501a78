import type { IncomingHttpHeaders } from 'node:http';
import type { TracingSettings } from '../platform/config.js';
import type { Attributes, OpenSpan, SpanSource } from './span-source.js';

export type { Attributes, OpenSpan } from './span-source.js';

/**
 * Tracing (OpenTelemetry): every span the service makes is made here, through the few functions
 * below that features call. Without an OTLP endpoint nothing is loaded (the SDK is imported only
 * by startTracing) and each function costs one check. An event's trace crosses processes as the
 * traceparent stored with it (migrations/0028): its `webhook receive` span is the parent of the
 * worker's `event process` and of every `delivery send`; `chat {model}` spans are children of
 * the `event process` whose ChatParent they are given (passed along, not kept in an
 * AsyncLocalStorage, which on Node 20 would slow down every promise of the process). Spans hold ids, names and numbers; the payload, prompt and
 * reply only with OTEL_RECORD_CONTENT=true; never a secret or a webhook token.
 */

/** What an event keeps of its trace (see migrations/0028). */
export interface EventTrace {
  /** Null when the trace is not sampled: nothing of it is exported, so there is nothing to show. */
  traceId: string | null;
  traceparent: string;
}

let source: SpanSource | undefined;
let recordContent = false;

/** The `event process` span (its traceparent) an attempt's AI calls belong to; absent: none. */
export type ChatParent = string | undefined;

/** Starts exporting spans when an endpoint is configured; without one, loads nothing. */
export async function startTracing(settings: TracingSettings): Promise<void> {
  const { tracesUrl } = settings;
  if (tracesUrl === undefined) return;
  const { otlpSpanSource } = await import('./otlp-spans.js');
  source = otlpSpanSource({ ...settings, tracesUrl });
  recordContent = settings.recordContent;
}

/** Exports the spans still buffered and stops; spans made afterwards are not recorded. */
export async function stopTracing(): Promise<void> {
  const stopping = source;
  source = undefined;
  await stopping?.shutdown();
}

/** The `webhook receive` span of one request, continuing the sender's traceparent if it sent one. */
export function startWebhookSpan(headers: IncomingHttpHeaders): OpenSpan | undefined {
  if (!source) return undefined;
  const sent = headers.traceparent;
  return source.start('webhook receive', 'server', typeof sent === 'string' ? sent : undefined, {
    'http.request.method': 'POST',
    'http.route': '/hooks/{token}',
  });
}

/** What the event stored for this request keeps of its trace. */
export function eventTrace(span: OpenSpan | undefined): EventTrace | undefined {
  if (!span) return undefined;
  return { traceId: span.sampled ? span.traceId : null, traceparent: span.traceparent };
}

/** Ends `webhook receive` once the answer is sent. */
export function endWebhookSpan(
  span: OpenSpan,
  answer: { channelId?: string; eventId?: string; status: number; payload?: string },
): void {
  span.set({
    'hookprompt.channel_id': answer.channelId,
    'hookprompt.event_id': answer.eventId,
    'http.response.status_code': answer.status,
    'hookprompt.payload': recordContent ? answer.payload : undefined,
  });
  if (answer.status >= 500) span.fail(String(answer.status));
  span.end();
}

/** One claimed event, as `event process` names it. */
export interface TracedEvent {
  id: string;
  channel_id: string;
  attempts: number;
  traceparent: string | null;
}

/**
 * Runs one attempt at an event in its `event process` span, under the event's `webhook receive`;
 * `answer` hands the ChatParent it is given to the attempt's AI calls, and resolves to what
 * became of the event (replied, retried, failed, ...).
 */
export async function withEventSpan<T extends string>(
  event: TracedEvent,
  answer: (chatParent: ChatParent) => Promise<T>,
): Promise<T> {
  if (!source) return answer(undefined);
  const span = source.start('event process', 'consumer', event.traceparent ?? undefined, {
    'hookprompt.event_id': event.id,
    'hookprompt.channel_id': event.channel_id,
  });
  return runInSpan(
    span,
    () => answer(span.traceparent),
    (outcome) => {
      span.set({ 'hookprompt.event_outcome': outcome });
      if (outcome === 'failed') span.fail('event_failed');
    },
  );
}

/** One AI call, as `chat {model}` describes it. */
export interface ChatCall {
  /** The provider's kind, as GenAI names providers: `openai`, `anthropic` (or `echo`). */
  provider: string;
  model: string | undefined;
  prompt: string;
}

/** What `chat {model}` reads of a reply. */
export interface ChatReply {
  text: string;
  model: string | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null } | null;
}

/**
 * Makes one AI call in its `chat {model}` span (GenAI semantic conventions), under its
 * `event process`. Without one (a preview in the panel), no span is made.
 */
export async function withChatSpan<R extends ChatReply>(
  parent: ChatParent,
  call: ChatCall,
  complete: () => Promise<R>,
): Promise<R> {
  if (!source || parent === undefined) return complete();
  const span = source.start(`chat ${call.model ?? ''}`.trim(), 'client', parent, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': call.provider,
    'gen_ai.request.model': call.model,
    'gen_ai.input.messages': recordContent ? messages('user', call.prompt) : undefined,
  });
  return runInSpan(span, complete, (reply) =>
    span.set({
      'gen_ai.response.model': reply.model ?? undefined,
      'gen_ai.usage.input_tokens': reply.usage?.prompt_tokens ?? undefined,
      'gen_ai.usage.output_tokens': reply.usage?.completion_tokens ?? undefined,
      'gen_ai.output.messages': recordContent ? messages('assistant', reply.text) : undefined,
    }),
  );
}

/** A delivery attempt, as `delivery send` places it: under its event's `webhook receive`. */
/**
 * One tool call the model asked for, in its `execute_tool {tool}` span (GenAI semantic
 * conventions) under the attempt's `event process`; a call that did not end `ok` marks it
 * failed with its status. Without a parent, no span is made.
 */
export async function withToolSpan<R extends { status: string }>(
  parent: ChatParent,
  tool: string,
  call: () => Promise<R>,
): Promise<R> {
  if (!source || parent === undefined) return call();
  const span = source.start(`execute_tool ${tool}`, 'client', parent, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
  });
  return runInSpan(span, call, (result) => {
    if (result.status !== 'ok') span.fail(result.status);
  });
}

export interface TracedDelivery {
  id: string;
  event_id: string;
  /** The event's stored traceparent (null when tracing was off when it arrived). */
  event_traceparent: string | null;
}

/** Lets an attempt add what it learns (the receiver's status, the outcome) to its span. */
export type NoteOnSpan = (attributes: Attributes) => void;
const ignoreNote: NoteOnSpan = () => undefined;

/** Attempt outcomes that mark `delivery send` failed (given back at shutdown or lost: not). */
const UNDELIVERED: ReadonlySet<string> = new Set(['retried', 'failed', 'gone']);

/**
 * Runs one delivery attempt in its `delivery send` span. `kind` is the destination's kind
 * (`webhook` for reply delivery): every destination sender calls this around its attempt.
 */
export async function withDeliverySpan<T extends string>(
  kind: string,
  delivery: TracedDelivery,
  attempt: (note: NoteOnSpan) => Promise<T>,
): Promise<T> {
  if (!source) return attempt(ignoreNote);
  const span = source.start('delivery send', 'client', delivery.event_traceparent ?? undefined, {
    'hookprompt.destination_kind': kind,
    'hookprompt.event_id': delivery.event_id,
    'hookprompt.delivery_id': delivery.id,
  });
  return runInSpan(
    span,
    () => attempt((attributes) => span.set(attributes)),
    (outcome) => {
      span.set({ 'hookprompt.delivery_outcome': outcome });
      if (UNDELIVERED.has(outcome)) span.fail(`delivery_${outcome}`);
    },
  );
}

/**
 * Runs `work` in `span`, which `ended` describes with the result; an exception marks the span
 * failed with its type. The span ends either way.
 */
async function runInSpan<T>(
  span: OpenSpan,
  work: () => Promise<T>,
  ended: (result: T) => void,
): Promise<T> {
  try {
    const result = await work();
    ended(result);
    return result;
  } catch (error) {
    span.fail(errorType(error));
    throw error;
  } finally {
    span.end();
  }
}

/** The GenAI message list of one text (recorded only with OTEL_RECORD_CONTENT=true). */
function messages(role: 'user' | 'assistant', text: string): string {
  return JSON.stringify([{ role, parts: [{ type: 'text', content: text }] }]);
}

/**
 * An error's class (or its HTTP status outside 2xx), never its message: messages may quote
 * content. A 2xx that brought no usable reply is the error's class.
 */
function errorType(error: unknown): string {
  const status = (error as { httpStatus?: unknown } | null)?.httpStatus;
  if (typeof status === 'number' && (status < 200 || status > 299)) return String(status);
  return error instanceof Error ? error.name : 'Error';
}

/** The link to an event's trace (TRACE_URL_TEMPLATE with `{trace_id}` filled in), if any. */
export function traceUrl(template: string | undefined, traceId: string | null): string | undefined {
  return template && traceId ? template.replaceAll('{trace_id}', traceId) : undefined;
}

import { performance } from 'node:perf_hooks';
import {
  OutboundClient,
  OutboundError,
  type OutboundResponse,
} from '../outbound/outbound-client.js';
import { AiError, type AiProvider, type AiReply, type AiRequest } from './ai-provider.js';
import { messagesBody } from './anthropic-request.js';
import { anthropicAnswer } from './anthropic-response.js';
import {
  scrubKey,
  snippet,
  statusError,
  unansweredError,
  type StatusRules,
} from './provider-errors.js';
import { ProviderPause } from './provider-pause.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The API version the requests and answers here are written for. */
const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicOptions {
  /** The API's origin; `/v1/messages` is appended (see `messagesUrl`). */
  baseUrl?: string;
  /** AI_MODEL: used when the channel names none. */
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
  /** False for servers typed in by a workspace's admins (see PROVIDERS_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
}

/** Past this, an answer is no message worth reading (and is not held in memory). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

const STATUS_RULES: StatusRules = {
  /** Busy, rate limited, broken or overloaded (529): asking again later may help. */
  retryable: (status) => status === 429 || status >= 500,
  /** Statuses whose `retry-after` says "slow down": it delays the event and pauses other calls. */
  backPressure: (status) => status === 429 || status === 503 || status === 529,
};

/**
 * Anthropic's Messages API (version 2023-06-01), spoken directly: one POST through the service's
 * outbound client, as for OpenAI-compatible servers, so a call has the same deadline, the same
 * refusal to follow redirects (they would resend the key), the same CPU cost, and errors
 * classified here once; nothing is read from the environment.
 *
 * Not on the official `@anthropic-ai/sdk`: its current major sends the key as a bearer token
 * under a newer API version; every release reads ANTHROPIC_* variables (custom headers among
 * them, with no option to turn that off) and its own retries, tracing and console logging are
 * all on by default; and its fetch transport follows redirects and costs more CPU per call
 * than the outbound client, which the worker spends at every reply.
 */
export class AnthropicProvider implements AiProvider {
  readonly name = 'anthropic';
  readonly deterministic = false;
  private readonly url: URL;
  private readonly pause = new ProviderPause();
  private readonly client: OutboundClient;

  constructor(private readonly options: AnthropicOptions) {
    this.url = messagesUrl(options.baseUrl ?? ANTHROPIC_BASE_URL);
    this.client = new OutboundClient({
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate ?? true,
      keepBodyBytes: MAX_ANSWER_BYTES,
      // The worker's concurrency bounds the calls in flight; a call must never wait for a socket.
      maxSocketsPerHost: Number.POSITIVE_INFINITY,
    });
  }

  async complete(request: AiRequest, signal: AbortSignal): Promise<AiReply> {
    await this.pause.wait(signal);
    const model = request.model ?? this.options.model;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
    };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    const started = performance.now();
    let answered: OutboundResponse;
    try {
      answered = await this.client.post(
        this.url.href,
        JSON.stringify(messagesBody(request, model)),
        headers,
        signal,
      );
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      throw unansweredError(error, this.options.timeoutMs, this.url.host);
    }
    const { status, bodyStart: text, bodyBytes } = answered;
    const latencyMs = Math.round(performance.now() - started);

    if (status < 200 || status > 299) {
      const retryAfter = answered.headers['retry-after'] ?? null;
      throw statusError(status, retryAfter, errorText(this.scrub(text)), STATUS_RULES, this.pause);
    }
    if (bodyBytes > MAX_ANSWER_BYTES) {
      throw new AiError(
        `The AI server sent an answer of ${bodyBytes} bytes, more than a message can be (${MAX_ANSWER_BYTES}).`,
        false,
      );
    }
    const structured = request.responseFormat !== undefined && request.responseFormat !== 'text';
    const answer = anthropicAnswer(text, structured);
    // A 200 without a reply in it is most often a proxy or an overloaded server answering for the
    // model; asking again is worth it, and max attempts bounds the cost.
    if ('missing' in answer) {
      throw new AiError(
        `The AI server sent an answer without ${answer.missing}: ${snippet(this.scrub(text))}`,
        true,
      );
    }
    return { text: answer.text, model, usage: answer.usage, latencyMs };
  }

  private scrub(message: string): string {
    return scrubKey(message, this.options.apiKey);
  }
}

/**
 * Where messages are posted: `{base}/v1/messages`. A base that already ends in `/v1` or in
 * `/v1/messages` (as some gateways are written down) is taken as meant; query parameters stay.
 */
export function messagesUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/v1/messages')) url.pathname = path;
  else if (path.endsWith('/v1')) url.pathname = `${path}/messages`;
  else url.pathname = `${path}/v1/messages`;
  return url;
}

/** `type: message` of Anthropic's error body, or the start of whatever else was sent. */
function errorText(text: string): string {
  try {
    const error = (JSON.parse(text) as { error?: { type?: unknown; message?: unknown } })?.error;
    if (typeof error?.message === 'string' && error.message.trim()) {
      const type = typeof error.type === 'string' && error.type ? `${error.type}: ` : '';
      return snippet(`${type}${error.message}`);
    }
  } catch {
    // not JSON: show the text itself
  }
  return snippet(text) || 'no details given';
}

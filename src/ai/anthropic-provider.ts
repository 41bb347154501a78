import { asksForJson } from './ai-settings.js';
import type { AiProvider, AiReply, AiRequest } from './ai-provider.js';
import { jsonBody } from './json-body.js';
import { messagesBody } from './anthropic-request.js';
import { anthropicAnswer } from './anthropic-response.js';
import { snippet, type StatusRules } from './provider-errors.js';
import { ProviderHttp } from './provider-http.js';

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

const STATUS_RULES: StatusRules = {
  /** Busy, rate limited, broken or overloaded (529): asking again later may help. */
  retryable: (status) => status === 429 || status >= 500,
  /** Statuses whose `retry-after` says "slow down": it delays the event and pauses other calls. */
  backPressure: (status) => status === 429 || status === 503 || status === 529,
};

/**
 * Anthropic's Messages API (version 2023-06-01), spoken directly: one POST through ProviderHttp,
 * as for OpenAI-compatible servers, so a call has the same deadline, the same refusal to follow
 * redirects (they would resend the key), the same CPU cost and the same error classification;
 * nothing is read from the environment.
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
  private readonly http: ProviderHttp;

  constructor(private readonly options: AnthropicOptions) {
    this.http = new ProviderHttp({
      url: messagesUrl(options.baseUrl ?? ANTHROPIC_BASE_URL),
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate,
      rules: STATUS_RULES,
      errorText,
      answerName: 'a message',
    });
  }

  async complete(request: AiRequest, signal: AbortSignal): Promise<AiReply> {
    const model = request.model ?? this.options.model;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
    };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    const body = jsonBody(request, (sent) => messagesBody(sent, model));
    const { text, latencyMs } = await this.http.post(body, headers, signal);
    const tools = request.toolUse?.choice ?? 'no tools';
    const answer = anthropicAnswer(text, asksForJson(request.responseFormat), tools);
    if ('missing' in answer) throw this.http.missingReply(answer.missing, text, answer.usage);
    const { toolCalls } = answer;
    return {
      text: answer.text,
      model,
      usage: answer.usage,
      latencyMs,
      ...(toolCalls ? { toolCalls } : {}),
    };
  }

  retire(): void {
    this.http.retire();
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

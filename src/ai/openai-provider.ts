import { type AiProvider, type AiReply, type AiRequest, type TokenUsage } from './ai-provider.js';
import { jsonBody } from './json-body.js';
import { chatCompletionBody } from './chat-request.js';
import { snippet, type StatusRules } from './provider-errors.js';
import { ProviderHttp } from './provider-http.js';
import type { ModelToolCall } from './tool-protocol.js';

export interface OpenAiOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; see `chatCompletionsUrl`. */
  baseUrl: string;
  /** AI_MODEL: used when the channel names none. */
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
  /** False for servers typed in by a workspace's admins (see PROVIDERS_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
}

const STATUS_RULES: StatusRules = {
  /** Statuses worth asking again later: the server was busy, rate limited us, or broke. */
  retryable: (status) => status === 408 || status === 409 || status === 429 || status >= 500,
  /** Statuses whose `Retry-After` says "slow down": it delays the event and pauses other calls. */
  backPressure: (status) => status === 429 || status === 503,
};

/**
 * Any server speaking the OpenAI chat-completions protocol (OpenAI, vLLM, Ollama, LiteLLM...).
 *
 * Written on the service's outbound client rather than the official `openai` package: its
 * current releases need Node 22 (this service runs on Node 20), and what it would add — its own
 * retries, timeouts, streaming and a typed surface of the whole API — is either turned off here
 * (the queue owns retries and deadlines) or unused. One call is one POST (ProviderHttp: the
 * deadline, no redirects, errors classified once, the key scrubbed); this file holds the
 * protocol: the request, which statuses may be retried, the reply and its usage. The server's
 * own AI server is the operator's choice (AI_BASE_URL, often a model on
 * localhost), so private addresses may be called; a workspace's providers only when allowed.
 */
export class OpenAiProvider implements AiProvider {
  readonly name = 'openai';
  readonly deterministic = false;
  private readonly http: ProviderHttp;

  constructor(private readonly options: OpenAiOptions) {
    this.http = new ProviderHttp({
      url: chatCompletionsUrl(options.baseUrl),
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate,
      rules: STATUS_RULES,
      errorText,
      answerName: 'a chat completion',
    });
  }

  async complete(request: AiRequest, signal: AbortSignal): Promise<AiReply> {
    const model = request.model ?? this.options.model;
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    if (this.options.apiKey) headers.Authorization = `Bearer ${this.options.apiKey}`;
    const body = jsonBody(request, (sent) => chatCompletionBody(sent, model));
    const { text, latencyMs } = await this.http.post(body, headers, signal);
    const answer = answerOf(text);
    if (answer.toolCalls.length && request.toolUse?.choice === 'auto') {
      const { toolCalls, usage } = answer;
      return { text: answer.content ?? '', model, usage, latencyMs, toolCalls };
    }
    if (answer.content === undefined) {
      throw this.http.missingReply('a reply in it', text, answer.usage);
    }
    return { text: answer.content, model, usage: answer.usage, latencyMs };
  }

  retire(): void {
    this.http.retire();
  }
}

/**
 * Where chat completions are posted. AI_BASE_URL is the API root including its version, as in
 * the OpenAI SDKs (`https://api.openai.com/v1`, `http://localhost:11434/v1`); `/chat/completions`
 * is appended. A bare origin without a path gets the usual `/v1`, and a URL that already ends in
 * `/chat/completions` is used as it is. Query parameters (e.g. `api-version`) are kept.
 */
export function chatCompletionsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/chat/completions')) url.pathname = `${path || '/v1'}/chat/completions`;
  return url;
}

interface ChatCompletion {
  choices?: { message?: { content?: unknown; tool_calls?: unknown } }[];
  usage?: Record<string, unknown> | null;
}

interface CompletionAnswer {
  content: string | undefined;
  toolCalls: ModelToolCall[];
  usage: TokenUsage | null;
}

/** The reply of a completion (undefined when it has none), its tool calls and its usage. */
function answerOf(text: string): CompletionAnswer {
  let parsed: ChatCompletion;
  try {
    parsed = JSON.parse(text) as ChatCompletion;
  } catch {
    return { content: undefined, toolCalls: [], usage: null };
  }
  const message = parsed?.choices?.[0]?.message;
  const content = message?.content;
  return {
    content: typeof content === 'string' ? content : undefined,
    toolCalls: toolCallsOf(message?.tool_calls),
    usage: usageOf(parsed?.usage),
  };
}

/** The function calls of an assistant message; malformed entries are left out. */
function toolCallsOf(calls: unknown): ModelToolCall[] {
  if (!Array.isArray(calls)) return [];
  const found: ModelToolCall[] = [];
  for (const call of calls as {
    id?: unknown;
    function?: { name?: unknown; arguments?: unknown };
  }[]) {
    const name = call?.function?.name;
    if (typeof call?.id !== 'string' || typeof name !== 'string') continue;
    const args = call.function?.arguments;
    found.push({ id: call.id, name, argumentsText: typeof args === 'string' ? args : '' });
  }
  return found;
}

/**
 * The token counts as reported (`prompt_tokens_details.cached_tokens`: what was read from the
 * prompt cache; OpenAI-compatible servers write to it without counting); null when the server
 * reported none of them.
 */
export function usageOf(usage: Record<string, unknown> | null | undefined): TokenUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const count = (value: unknown) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
  const details = usage.prompt_tokens_details as Record<string, unknown> | null | undefined;
  const result: TokenUsage = {
    prompt_tokens: count(usage.prompt_tokens),
    completion_tokens: count(usage.completion_tokens),
    total_tokens: count(usage.total_tokens),
    cache_read_tokens: (details && count(details.cached_tokens)) ?? 0,
    cache_write_tokens: 0,
  };
  if (result.prompt_tokens === null && result.completion_tokens === null) {
    return result.total_tokens === null ? null : result;
  }
  return result;
}

/** The `error.message` of an OpenAI-style error body, or the start of whatever else was sent. */
function errorText(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
    if (typeof message === 'string' && message.trim()) return snippet(message);
  } catch {
    // not JSON: show the text itself
  }
  return snippet(text) || 'no details given';
}

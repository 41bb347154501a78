import { AiError, type AiProvider } from './ai-provider.js';

export interface OpenAiOptions {
  /** The API root, e.g. `https://api.openai.com/v1`; see `chatCompletionsUrl`. */
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}

/** Statuses worth asking again later: the server was busy, rate limited us, or broke. */
const RETRYABLE_STATUS = (status: number) =>
  status === 408 || status === 409 || status === 429 || status >= 500;

/** Any server speaking the OpenAI chat-completions protocol (OpenAI, vLLM, Ollama, LiteLLM...). */
export class OpenAiProvider implements AiProvider {
  readonly name = 'openai';
  private readonly url: URL;

  constructor(private readonly options: OpenAiOptions) {
    this.url = chatCompletionsUrl(options.baseUrl);
  }

  async complete(prompt: string, signal: AbortSignal): Promise<string> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    if (this.options.apiKey) headers.Authorization = `Bearer ${this.options.apiKey}`;
    let status: number;
    let text: string;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: this.options.model,
          messages: [{ role: 'user', content: prompt }],
        }),
        signal: AbortSignal.any([signal, timeout]),
      });
      status = res.status;
      text = await res.text();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (timeout.aborted) {
        throw new AiError(
          `The AI server did not answer within ${this.options.timeoutMs} ms.`,
          true,
        );
      }
      throw new AiError(
        `Could not reach the AI server at ${this.url.host}: ${networkReason(error)}.`,
        true,
      );
    }

    if (status < 200 || status > 299) {
      const retryable = RETRYABLE_STATUS(status);
      const verb = retryable ? 'failed' : 'refused the request';
      throw new AiError(
        `The AI server ${verb} (HTTP ${status}): ${errorText(this.scrub(text))}`,
        retryable,
      );
    }
    const reply = replyOf(text);
    // A 200 without a reply in it is most often a proxy or an overloaded server answering for the
    // model; asking again is worth it, and max attempts bounds the cost.
    if (reply === undefined) {
      throw new AiError(
        `The AI server sent an answer without a reply in it: ${snippet(this.scrub(text))}`,
        true,
      );
    }
    return reply;
  }

  /**
   * Servers sometimes quote the key they were given in error messages; Brain Logs must not show it.
   * Scrubbed before the text is shortened: a key cut in two by the shortening would no longer match.
   */
  private scrub(message: string): string {
    const key = this.options.apiKey;
    return key ? message.replaceAll(key, '[redacted]') : message;
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

function replyOf(text: string): string | undefined {
  try {
    const content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] })
      ?.choices?.[0]?.message?.content;
    return typeof content === 'string' ? content : undefined;
  } catch {
    return undefined;
  }
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

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } })?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

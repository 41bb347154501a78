import type { PromptCache, ResponseFormat } from './ai-settings.js';
import type { ModelToolCall, ToolOffer } from './tool-protocol.js';

/** One earlier exchange of a thread, sent before the prompt as a user/assistant pair. */
export interface HistoryTurn {
  prompt: string;
  reply: string;
}

/**
 * An image sent with the prompt: its media type and its bytes in base64, as both provider kinds
 * take it inline (src/attachments/ fetched and checked it).
 */
export interface ChatImage {
  media_type: string;
  data: string;
}

/** Everything one AI call is made of; optional members are left to the provider's defaults. */
export interface AiRequest {
  prompt: string;
  /** The rendered system prompt; empty or absent means no system message. */
  system?: string;
  /** Oldest first. */
  history: readonly HistoryTurn[];
  /** The channel's model; absent means the server's (AI_MODEL). */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  responseFormat?: ResponseFormat;
  /** Ask the provider to cache the prompt's fixed start (system prompt, history); off when absent. */
  promptCache?: PromptCache;
  /** OpenAI's `prompt_cache_key`: requests sharing it share the cache (one per channel). */
  cacheKey?: string;
  /** Images sent with the prompt (not with the history), in the order of the channel's paths. */
  images?: readonly ChatImage[];
  /** The tools offered and the rounds so far (tool-protocol.ts); absent, none are offered. */
  toolUse?: ToolOffer;
}

/** Tokens as the provider reported them. */
export interface TokenUsage {
  /** Every input token, those read from or written to the provider's prompt cache included. */
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  /** Input tokens read from the provider's prompt cache (0 when it reports none). */
  cache_read_tokens: number;
  /** Input tokens written to the provider's prompt cache (0 when it reports none). */
  cache_write_tokens: number;
}

export interface AiReply {
  text: string;
  /** The model the request named (null when none was named, as with the echo and no AI_MODEL). */
  model: string | null;
  usage: TokenUsage | null;
  /** How long the call itself took, from sending the request to reading the whole answer. */
  latencyMs: number;
  /**
   * The tools the model asked to call (only when the request offered tools and let it call
   * them); `text` is then what it wrote beside them, possibly empty.
   */
  toolCalls?: ModelToolCall[];
}

/** Something that turns a prompt into a reply: the offline echo stand-in or a real model. */
export interface AiProvider {
  readonly name: string;
  /**
   * True when asking again always gives the same answer (the echo): a reply that fails the
   * channel's format check is then final at once instead of being retried.
   */
  readonly deterministic: boolean;
  /**
   * Resolves to the reply. Rejects with an AiError when the model gave no usable answer, or with
   * `signal.reason` when the caller aborted (the worker is shutting down).
   */
  complete(request: AiRequest, signal: AbortSignal): Promise<AiReply>;
  /**
   * Called once no call will be made through it again (a test's one call, settings replaced):
   * its idle connections end now, busy ones when their answer is read. None for the echo.
   */
  retire?(): void;
}

/** How a failed call ended: no answer at all, or the server's HTTP status. */
export type AiFailure = { unanswered: true } | { unanswered: false; httpStatus?: number };

/**
 * Why a reply could not be had. `retryable` says whether asking again later may help (timeouts,
 * network errors, an overloaded server) or not (a wrong key, a request the server refuses).
 * `retryAfterMs` is the server's own `Retry-After`: the next attempt waits at least that long.
 * `failure` says whether the server answered (and with which status), which decides whether a
 * fallback provider is asked. The message is shown to admins in Brain Logs, so it never contains
 * the API key. `rejectedReply` is the model's answer when it came but was refused
 * (`reply_invalid`), so Brain Logs can show what the model said. `usage` is what an answer that
 * came but was refused reported: the provider bills it, so the call's cost counts it.
 */
export class AiError extends Error {
  override name = 'AiError';

  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    readonly failure: AiFailure = { unanswered: false },
    readonly rejectedReply?: string,
    readonly usage: TokenUsage | null = null,
  ) {
    super(message);
  }

  get httpStatus(): number | undefined {
    return this.failure.unanswered ? undefined : this.failure.httpStatus;
  }
}

/**
 * Whether the next provider of a channel's fallbacks is asked after this failure: when the
 * server did not answer (timeout, connection error) or answered 408, 429, 5xx or 529, never for
 * another 4xx or a reply of the wrong shape, which another provider would most likely repeat.
 */
export function fallsBack(error: AiError): boolean {
  if (error.failure.unanswered) return true;
  const status = error.failure.httpStatus;
  return status !== undefined && (status === 408 || status === 429 || status >= 500);
}

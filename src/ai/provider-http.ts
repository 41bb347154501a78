import { performance } from 'node:perf_hooks';
import { OutboundClient, OutboundError, type OutboundBody } from '../outbound/outbound-client.js';
import type { SecretCutter } from '../secrets/cut-secrets.js';
import { AiError, type TokenUsage } from './ai-provider.js';
import {
  keyCutter,
  snippet,
  statusError,
  unansweredError,
  type StatusRules,
} from './provider-errors.js';
import { ProviderPause } from './provider-pause.js';

/** Past this, an answer is no reply worth reading (and is not held in memory). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * How much of an answer an error reads: no server's error message is longer, and secrets are
 * cut out of all of what is read, escapes decoded, which megabytes would make slow.
 */
const ERROR_TEXT_CHARS = 64 * 1024;

export interface ProviderHttpOptions {
  url: URL;
  apiKey: string | undefined;
  timeoutMs: number;
  /** False for servers typed in by a workspace's admins (see PROVIDERS_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
  rules: StatusRules;
  /** The server's own words in an error body (each protocol writes them its own way). */
  errorText: (body: string) => string;
  /** What one answer is called in messages: "a chat completion", "a message". */
  answerName: string;
}

/**
 * What every HTTP provider does around its protocol: waits out the shared pause, posts once
 * through the outbound client (a deadline, no redirect followed: it would resend the key), and
 * turns no answer, a status outside 2xx or an oversized answer into an AiError whose text never
 * holds the key.
 */
export class ProviderHttp {
  private readonly pause = new ProviderPause();
  private readonly client: OutboundClient;
  private readonly cutter: SecretCutter;

  constructor(private readonly options: ProviderHttpOptions) {
    this.cutter = keyCutter(options.apiKey, options.url);
    this.client = new OutboundClient({
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate ?? true,
      setting: 'PROVIDERS_ALLOW_PRIVATE',
      keepBodyBytes: MAX_ANSWER_BYTES,
      // The worker's concurrency bounds the calls in flight; a call must never wait for a socket.
      maxSocketsPerHost: Number.POSITIVE_INFINITY,
    });
  }

  /** Resolves to the body of a 2xx answer and how long the call took. */
  async post(
    body: OutboundBody,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<{ text: string; latencyMs: number }> {
    const { url, timeoutMs, rules, errorText, answerName } = this.options;
    await this.pause.wait(signal);
    const started = performance.now();
    let answered;
    try {
      answered = await this.client.post(url.href, body, headers, signal);
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      throw unansweredError(error, timeoutMs, url.host);
    }
    const { status, bodyStart: text, bodyBytes } = answered;
    const latencyMs = Math.round(performance.now() - started);
    if (status < 200 || status > 299) {
      const retryAfter = answered.headers['retry-after'] ?? null;
      // Cut before the protocol reads the body (its JSON decoding would undo an escaped key's
      // disguise) and again after.
      const detail = this.scrub(errorText(this.scrub(text)));
      throw statusError(status, retryAfter, detail, rules, this.pause);
    }
    if (bodyBytes > MAX_ANSWER_BYTES) {
      throw new AiError(
        `The AI server sent an answer of ${bodyBytes} bytes, more than ${answerName} can be (${MAX_ANSWER_BYTES}).`,
        false,
      );
    }
    return { text, latencyMs };
  }

  /** See AiProvider.retire: no call will be made through this server's client again. */
  retire(): void {
    this.client.retire();
  }

  /**
   * A 2xx answer without a reply in it is most often a proxy or an overloaded server answering
   * for the model: asking again is worth it, and max attempts bounds the cost. The `usage` it
   * reported, if any, is kept: a model that answered without the reply asked for is paid.
   */
  missingReply(what: string, text: string, usage: TokenUsage | null = null): AiError {
    return new AiError(
      `The AI server sent an answer without ${what}: ${snippet(this.scrub(text))}`,
      true,
      undefined,
      { unanswered: false, httpStatus: 200 },
      undefined,
      usage,
    );
  }

  private scrub(text: string): string {
    return this.cutter.cut(text.slice(0, ERROR_TEXT_CHARS));
  }
}

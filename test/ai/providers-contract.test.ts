import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { AiError, fallsBack, type AiProvider, type AiRequest } from '../../src/ai/ai-provider.js';
import { AnthropicProvider } from '../../src/ai/anthropic-provider.js';
import { OpenAiProvider } from '../../src/ai/openai-provider.js';
import { chatCompletion, FakeAiServer } from '../support/fake-ai-server.js';
import { FAKE_ANTHROPIC_KEY, FakeAnthropicServer } from '../support/fake-anthropic-server.js';
import { useFakeAi, useFakeAnthropic } from '../support/harness.js';

// What every HTTP provider promises the worker, whatever its protocol (both go through
// ProviderHttp): how a failure is classified (retry, fall back), the deadline, Retry-After and
// the pause it causes, no redirect followed, the key never shown, an abort passed through.
// Each kind's own request and answer shapes are in openai-provider.test.ts and
// anthropic-provider.test.ts.

const openAiServer = useFakeAi();
const anthropicServer = useFakeAnthropic();
const never = new AbortController().signal;
const OPENAI_KEY = 'sk-test-secret-key-4242';

interface ProviderOptions {
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
}

/** A reply the fakes of both kinds script alike. */
interface Scripted {
  status?: number;
  body?: unknown;
  hang?: boolean;
  headers?: Record<string, string>;
}

interface Kind {
  name: string;
  key: string;
  provider(options?: ProviderOptions): AiProvider;
  /** The fake server of this kind, started for the file. */
  server(): {
    baseUrl: string;
    requests: { prompt: string | undefined }[];
    enqueue(...replies: Scripted[]): void;
    waitForRequests(count: number): Promise<void>;
  };
  /** A fake of this kind that is not listening any more. */
  goneServer(): Promise<string>;
  /** Scripts an error answer carrying `message` as this protocol writes errors. */
  failWith(status: number, message: string, headers?: Record<string, string>): void;
  /** How `failWith`'s message shows in the AiError (the protocol's own words). */
  serverSaid(status: number, message: string): string;
  /** Scripts a 2xx answer whose reply is `text`. */
  replyWith(text: string): void;
  /** Where the key would be sent again, for a redirect. */
  endpointPath: string;
  /** What a 2xx without a reply is said to lack, and what one answer is called. */
  withoutReply: string;
  answerName: string;
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  529: 'overloaded_error',
};

const openai: Kind = {
  name: 'OpenAI-compatible',
  key: OPENAI_KEY,
  provider: (options = {}) =>
    new OpenAiProvider({
      baseUrl: openAiServer.baseUrl,
      model: 'fake-model',
      apiKey: OPENAI_KEY,
      timeoutMs: 2000,
      ...options,
    }),
  server: () => openAiServer,
  async goneServer() {
    const gone = await FakeAiServer.start();
    await gone.close();
    return gone.baseUrl;
  },
  failWith: (status, message, headers) =>
    openAiServer.enqueue({ status, body: { error: { message } }, headers }),
  serverSaid: (_status, message) => message,
  replyWith: (text) => openAiServer.enqueue({ body: chatCompletion(text) }),
  endpointPath: '/chat/completions',
  withoutReply: 'a reply in it',
  answerName: 'a chat completion',
};

const anthropic: Kind = {
  name: 'Anthropic',
  key: FAKE_ANTHROPIC_KEY,
  provider: (options = {}) =>
    new AnthropicProvider({
      baseUrl: anthropicServer.baseUrl,
      model: 'claude-fake',
      apiKey: FAKE_ANTHROPIC_KEY,
      timeoutMs: 2000,
      ...options,
    }),
  server: () => anthropicServer,
  async goneServer() {
    const gone = await FakeAnthropicServer.start();
    await gone.close();
    return gone.baseUrl;
  },
  failWith: (status, message, headers) =>
    anthropicServer.enqueue({
      status,
      error: { type: ANTHROPIC_ERROR_TYPES[status] ?? 'api_error', message },
      headers,
    }),
  serverSaid: (status, message) => `${ANTHROPIC_ERROR_TYPES[status] ?? 'api_error'}: ${message}`,
  replyWith: (text) => anthropicServer.enqueue({ text }),
  endpointPath: '/messages',
  withoutReply: 'a message in it',
  answerName: 'a message',
};

const ask = (prompt: string): AiRequest => ({ prompt, history: [] });

async function failure(promise: Promise<unknown>): Promise<AiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AiError);
  return error as AiError;
}

describe.each([openai, anthropic])('$name provider: the contract of every provider', (kind) => {
  describe('a failed call', () => {
    it('treats 429, 500, 503 and 529 as worth retrying and falling back, with the server message', async () => {
      for (const status of [429, 500, 503, 529]) {
        kind.failWith(status, 'overloaded, try later');
        const error = await failure(kind.provider().complete(ask('x'), never));
        expect(error.retryable).toBe(true);
        expect(error.message).toBe(
          `The AI server failed (HTTP ${status}): ${kind.serverSaid(status, 'overloaded, try later')}`,
        );
        expect(error.failure).toEqual({ unanswered: false, httpStatus: status });
        expect(fallsBack(error)).toBe(true);
      }
      // without an error body
      kind.server().enqueue({ status: 429 });
      expect((await failure(kind.provider().complete(ask('x'), never))).retryable).toBe(true);
    });

    it('treats 400, 401, 403, 404 and 413 as final, for the fallbacks too', async () => {
      for (const status of [400, 401, 403, 404, 413]) {
        kind.failWith(status, 'no');
        const error = await failure(kind.provider().complete(ask('x'), never));
        expect(error.retryable).toBe(false);
        expect(error.message).toBe(
          `The AI server refused the request (HTTP ${status}): ${kind.serverSaid(status, 'no')}`,
        );
        expect(error.httpStatus).toBe(status);
        expect(fallsBack(error)).toBe(false);
      }
    });

    it('never puts the API key in an error, even when the server quotes it', async () => {
      kind.failWith(401, `bad key ${kind.key} here`);
      const error = await failure(kind.provider().complete(ask('x'), never));
      expect(error.message).not.toContain(kind.key);
      expect(error.message).toContain('bad key [redacted] here');
    });

    it('gives up on a server that does not answer within AI_TIMEOUT_MS, retryably', async () => {
      kind.server().enqueue({ hang: true });
      const error = await failure(kind.provider({ timeoutMs: 50 }).complete(ask('slow'), never));
      expect(error.retryable).toBe(true);
      expect(error.message).toBe('The AI server did not answer within 50 ms.');
      expect(error.failure).toEqual({ unanswered: true });
      expect(fallsBack(error)).toBe(true);
    });

    it('reports an unreachable server as a retryable network error', async () => {
      const baseUrl = await kind.goneServer();
      const error = await failure(kind.provider({ baseUrl }).complete(ask('x'), never));
      expect(error.retryable).toBe(true);
      expect(error.failure).toEqual({ unanswered: true });
      expect(error.message).toBe(
        `Could not reach the AI server at ${new URL(baseUrl).host}: ECONNREFUSED.`,
      );
    });

    it('reports a 200 that is not its answer (a gateway page) as retryable, quoting it', async () => {
      kind.server().enqueue({ body: '<html>gateway says hi</html>' });
      const html = await failure(kind.provider().complete(ask('x'), never));
      expect(html.retryable).toBe(true);
      expect(html.message).toBe(
        `The AI server sent an answer without ${kind.withoutReply}: <html>gateway says hi</html>`,
      );
    });

    it('does not follow a redirect, so the key never goes where it points', async () => {
      const elsewhere = await FakeAiServer.start();
      try {
        kind.server().enqueue({
          status: 307,
          body: '',
          headers: { Location: `${elsewhere.baseUrl}${kind.endpointPath}` },
        });
        const error = await failure(kind.provider().complete(ask('x'), never));
        expect(error.retryable).toBe(false);
        expect(error.message).toMatch(/^The AI server refused the request \(HTTP 307\)/);
        expect(elsewhere.requests).toHaveLength(0);
      } finally {
        await elsewhere.close();
      }
    });

    it('rejects with the abort reason, not an AiError, when the caller aborts', async () => {
      const server = kind.server();
      server.enqueue({ hang: true });
      const stop = new AbortController();
      const call = kind.provider().complete(ask('x'), stop.signal);
      await server.waitForRequests(server.requests.length + 1);
      const reason = new Error('stopping');
      stop.abort(reason);
      await expect(call).rejects.toBe(reason);
    });
  });

  describe('the answer', () => {
    it('reads a long reply whole, multi-byte characters included', async () => {
      const long = `${'Grüße aus Köln, 東京から 🌸 '.repeat(20_000)}end`;
      kind.replyWith(long);
      expect((await kind.provider().complete(ask('x'), never)).text).toBe(long);
    });

    it('refuses an answer larger than any reply, without keeping it', async () => {
      kind.server().enqueue({ body: 'x'.repeat(5 * 1024 * 1024) });
      const error = await failure(kind.provider().complete(ask('x'), never));
      expect(error.retryable).toBe(false);
      expect(error.message).toBe(
        `The AI server sent an answer of 5242880 bytes, more than ${kind.answerName} can be (4194304).`,
      );
    });

    it('keeps every call the worker makes in flight at once, waiting for no free socket', async () => {
      const server = kind.server();
      const calls = 100;
      const before = server.requests.length;
      server.enqueue(...Array.from({ length: calls }, () => ({ hang: true })));
      const shared = kind.provider();
      const stop = new AbortController();
      const pending = Array.from({ length: calls }, () =>
        shared.complete(ask('x'), stop.signal).catch(() => undefined),
      );
      await server.waitForRequests(before + calls);
      stop.abort(new Error('done'));
      await Promise.all(pending);
    });
  });

  describe('Retry-After', () => {
    it('carries the wait of a 429 or 503 in seconds or as an HTTP date, never of a 500', async () => {
      kind.failWith(429, 'slow down', { 'Retry-After': '2' });
      const limited = await failure(kind.provider().complete(ask('x'), never));
      expect(limited.retryable).toBe(true);
      expect(limited.retryAfterMs).toBe(2000);
      expect(limited.message).toMatch(/It asked to wait 2 s\.$/);

      const date = new Date(Date.now() + 3000).toUTCString();
      kind.failWith(503, 'busy', { 'Retry-After': date });
      const busy = await failure(kind.provider().complete(ask('x'), never));
      expect(busy.retryAfterMs).toBeGreaterThan(1000);
      expect(busy.retryAfterMs).toBeLessThanOrEqual(3000);

      kind.failWith(500, 'broken', { 'Retry-After': '9' });
      expect(
        (await failure(kind.provider().complete(ask('x'), never))).retryAfterMs,
      ).toBeUndefined();
    });

    it('holds back the other calls of the same provider for a short shared pause', async () => {
      const server = kind.server();
      const shared = kind.provider();
      kind.failWith(429, 'slow down', { 'Retry-After': '1' });
      await failure(shared.complete(ask('first'), never));
      const limitedAt = performance.now();
      const arrived = server
        .waitForRequests(server.requests.length + 1)
        .then(() => performance.now());
      await shared.complete(ask('second'), never);
      expect(server.requests.at(-1)?.prompt).toBe('second');
      expect((await arrived) - limitedAt).toBeGreaterThanOrEqual(990);
    });
  });
});

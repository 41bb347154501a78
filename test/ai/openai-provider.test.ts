import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AiError } from '../../src/ai/ai-provider.js';
import { createAiProvider } from '../../src/ai/create-provider.js';
import { echoProvider } from '../../src/ai/echo-provider.js';
import { chatCompletionsUrl, OpenAiProvider } from '../../src/ai/openai-provider.js';
import { parseConfig } from '../../src/config.js';
import { chatCompletion, FakeAiServer } from '../support/fake-ai-server.js';

const KEY = 'sk-test-secret-key-4242';
let ai: FakeAiServer;
const never = new AbortController().signal;

beforeAll(async () => {
  ai = await FakeAiServer.start();
});
afterAll(() => ai.close());

const provider = (options: Partial<ConstructorParameters<typeof OpenAiProvider>[0]> = {}) =>
  new OpenAiProvider({
    baseUrl: ai.baseUrl,
    model: 'fake-model',
    apiKey: KEY,
    timeoutMs: 2000,
    ...options,
  });

async function failure(promise: Promise<unknown>): Promise<AiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AiError);
  return error as AiError;
}

describe('OpenAI-compatible provider', () => {
  it('posts the prompt as a chat completion with the model and the bearer key, and returns the reply', async () => {
    ai.enqueue({ body: chatCompletion('Hello back') });
    const reply = await provider().complete('Hello', never);
    expect(reply).toBe('Hello back');
    const request = ai.requests.at(-1);
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toEqual({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  it('sends no Authorization header when no key is configured', async () => {
    await provider({ apiKey: undefined }).complete('no key', never);
    expect(ai.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('accepts AI_BASE_URL with or without /v1, or as the full endpoint', () => {
    expect(chatCompletionsUrl('https://api.openai.com/v1').href).toBe(
      'https://api.openai.com/v1/chat/completions',
    );
    expect(chatCompletionsUrl('https://api.openai.com').href).toBe(
      'https://api.openai.com/v1/chat/completions',
    );
    expect(chatCompletionsUrl('http://localhost:11434/v1/').href).toBe(
      'http://localhost:11434/v1/chat/completions',
    );
    expect(chatCompletionsUrl('http://gw.local/openai/v1/chat/completions').href).toBe(
      'http://gw.local/openai/v1/chat/completions',
    );
    expect(chatCompletionsUrl('https://x.example/deploy/v2?api-version=1').href).toBe(
      'https://x.example/deploy/v2/chat/completions?api-version=1',
    );
  });

  it('reaches the fake server through a base URL without /v1', async () => {
    const origin = ai.baseUrl.replace(/\/v1$/, '');
    expect(await provider({ baseUrl: origin }).complete('bare origin', never)).toBe(
      'Fake model reply to: bare origin',
    );
  });

  it('treats 429 and 5xx answers as worth retrying, with the server message', async () => {
    ai.enqueue({ status: 503, body: { error: { message: 'overloaded, try later' } } });
    const busy = await failure(provider().complete('x', never));
    expect(busy.retryable).toBe(true);
    expect(busy.message).toBe('The AI server failed (HTTP 503): overloaded, try later');

    ai.enqueue({ status: 429 });
    expect((await failure(provider().complete('x', never))).retryable).toBe(true);
  });

  it('treats 400, 401 and 403 as final', async () => {
    for (const status of [400, 401, 403]) {
      ai.enqueue({ status, body: { error: { message: 'no' } } });
      const error = await failure(provider().complete('x', never));
      expect(error.retryable).toBe(false);
      expect(error.message).toBe(`The AI server refused the request (HTTP ${status}): no`);
    }
  });

  it('never puts the API key in an error, even when the server quotes it', async () => {
    ai.enqueue({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}` } } });
    const error = await failure(provider().complete('x', never));
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain('[redacted]');
  });

  it('gives up on a server that does not answer within AI_TIMEOUT_MS, retryably', async () => {
    ai.enqueue({ hang: true });
    const error = await failure(provider({ timeoutMs: 50 }).complete('slow', never));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('The AI server did not answer within 50 ms.');
  });

  it('reports a non-JSON or reply-less 200 as a retryable malformed answer', async () => {
    ai.enqueue({ body: '<html>gateway says hi</html>' });
    const html = await failure(provider().complete('x', never));
    expect(html.retryable).toBe(true);
    expect(html.message).toBe(
      'The AI server sent an answer without a reply in it: <html>gateway says hi</html>',
    );

    ai.enqueue({ body: chatCompletion(null) });
    expect((await failure(provider().complete('x', never))).retryable).toBe(true);
  });

  it('reports an unreachable server as a retryable network error', async () => {
    const gone = await FakeAiServer.start();
    await gone.close();
    const error = await failure(provider({ baseUrl: gone.baseUrl }).complete('x', never));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(
      `Could not reach the AI server at ${new URL(gone.baseUrl).host}: ECONNREFUSED.`,
    );
  });

  it('rejects with the abort reason, not an AiError, when the caller aborts', async () => {
    ai.enqueue({ hang: true });
    const stop = new AbortController();
    const call = provider().complete('x', stop.signal);
    await ai.waitForRequests(ai.requests.length + 1);
    const reason = new Error('stopping');
    stop.abort(reason);
    await expect(call).rejects.toBe(reason);
  });
});

describe('echo provider', () => {
  it('is the default, replies deterministically and says it is a stand-in', async () => {
    const config = parseConfig({});
    expect(createAiProvider(config.ai)).toBe(echoProvider);
    const reply = await echoProvider.complete('Order 42 shipped', never);
    expect(reply).toBe('[echo stand-in — no AI model configured] You wrote: Order 42 shipped');
    expect(await echoProvider.complete('Order 42 shipped', never)).toBe(reply);
  });

  it('is replaced by the OpenAI-compatible provider when configured', () => {
    const config = parseConfig({ AI_PROVIDER: 'openai', AI_BASE_URL: ai.baseUrl, AI_MODEL: 'm' });
    expect(createAiProvider(config.ai).name).toBe('openai');
  });
});

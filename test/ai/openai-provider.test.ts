import { describe, expect, it } from 'vitest';
import { AiError, type AiRequest } from '../../src/ai/ai-provider.js';
import { createAiProvider } from '../../src/ai/create-provider.js';
import { createEchoProvider, echoProvider } from '../../src/ai/echo-provider.js';
import { parseRetryAfter } from '../../src/ai/retry-after.js';
import { chatCompletionsUrl, OpenAiProvider } from '../../src/ai/openai-provider.js';
import { parseConfig } from '../../src/platform/config.js';
import { chatCompletion } from '../support/fake-ai-server.js';
import { useFakeAi } from '../support/harness.js';

// What is the OpenAI protocol's own: the request, the reply and its usage, the URL. What every
// provider promises alike (errors, deadline, Retry-After, redirects, aborts) is in
// providers-contract.test.ts.
const KEY = 'sk-test-secret-key-4242';
const ai = useFakeAi();
const never = new AbortController().signal;

const ask = (prompt: string): AiRequest => ({ prompt, history: [] });

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
    const reply = await provider().complete(ask('Hello'), never);
    expect(reply).toMatchObject({
      text: 'Hello back',
      model: 'fake-model',
      usage: {
        prompt_tokens: 1,
        completion_tokens: 1,
        total_tokens: 2,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
      },
    });
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
    await provider({ apiKey: undefined }).complete(ask('no key'), never);
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
    expect((await provider({ baseUrl: origin }).complete(ask('bare origin'), never)).text).toBe(
      'Fake model reply to: bare origin',
    );
  });

  it('reports a completion without a reply in it as a retryable malformed answer', async () => {
    ai.enqueue({ body: chatCompletion(null) });
    expect((await failure(provider().complete(ask('x'), never))).retryable).toBe(true);
  });
});

describe('echo provider', () => {
  it('is the default, replies deterministically and says it is a stand-in', async () => {
    const config = parseConfig({});
    expect(createAiProvider(config.ai).name).toBe('echo');
    const reply = await echoProvider.complete(ask('Order 42 shipped'), never);
    expect(reply.text).toBe('[echo stand-in — no AI model configured] You wrote: Order 42 shipped');
    expect(reply.usage).toBeNull();
    expect(await echoProvider.complete(ask('Order 42 shipped'), never)).toEqual(reply);
  });

  it('is replaced by the OpenAI-compatible provider when configured', () => {
    const config = parseConfig({ AI_PROVIDER: 'openai', AI_BASE_URL: ai.baseUrl, AI_MODEL: 'm' });
    expect(createAiProvider(config.ai).name).toBe('openai');
  });
});

describe('channel AI settings in the request', () => {
  it('sends the system message, history pairs oldest first, the prompt and every setting', async () => {
    await provider().complete(
      {
        prompt: 'third',
        system: 'You are terse.',
        history: [
          { prompt: 'first', reply: 'one' },
          { prompt: 'second', reply: 'two' },
        ],
        model: 'channel-model',
        temperature: 0.2,
        maxTokens: 300,
        responseFormat: { json_schema: { type: 'object' } },
      },
      never,
    );
    expect(ai.requests.at(-1)?.body).toEqual({
      model: 'channel-model',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'one' },
        { role: 'user', content: 'second' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'third' },
      ],
      temperature: 0.2,
      max_tokens: 300,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'reply', schema: { type: 'object' } },
      },
    });
  });

  it('maps json to json_object and text to text, and leaves unset settings out', async () => {
    await provider().complete({ ...ask('a'), responseFormat: 'json', temperature: 0 }, never);
    expect(ai.requests.at(-1)?.body).toMatchObject({
      response_format: { type: 'json_object' },
      temperature: 0,
    });
    await provider().complete({ ...ask('b'), responseFormat: 'text', system: '' }, never);
    expect(ai.requests.at(-1)?.body).toEqual({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'b' }],
      response_format: { type: 'text' },
    });
  });

  it('reads usage as reported, or null when the server reports none', async () => {
    const body = chatCompletion('x') as Record<string, unknown>;
    ai.enqueue({ body: { ...body, usage: undefined } });
    expect((await provider().complete(ask('x'), never)).usage).toBeNull();
    ai.enqueue({
      body: {
        ...body,
        usage: {
          prompt_tokens: 12,
          completion_tokens: 30,
          total_tokens: 42,
          prompt_tokens_details: { cached_tokens: 8 },
        },
      },
    });
    // The cached input OpenAI read is counted apart; it writes to its cache without counting.
    expect((await provider().complete(ask('x'), never)).usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 30,
      total_tokens: 42,
      cache_read_tokens: 8,
      cache_write_tokens: 0,
    });
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates, and ignores anything else', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('99999999', now)).toBe(24 * 60 * 60 * 1000);
  });
});

describe('echo report', () => {
  it('says what it would have sent: model, system prompt, history count', async () => {
    const echo = createEchoProvider('gpt-default');
    const reply = await echo.complete(
      {
        prompt: 'Hi',
        system: 'Be kind',
        history: [{ prompt: 'a', reply: 'b' }],
        model: 'gpt-channel',
      },
      never,
    );
    expect(reply.model).toBe('gpt-channel');
    expect(reply.text).toBe(
      '[echo stand-in — no AI model configured] Would have sent model gpt-channel; system prompt “Be kind”; 1 earlier exchange of the thread. You wrote: Hi',
    );
    const json = await echo.complete({ ...ask('Hi'), responseFormat: 'json' }, never);
    expect(JSON.parse(json.text)).toEqual({
      echo: 'no AI model configured',
      model: 'gpt-default',
      system_prompt: null,
      history: 0,
      prompt: 'Hi',
    });
  });
});

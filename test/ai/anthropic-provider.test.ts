import { describe, expect, it } from 'vitest';
import { AiError, fallsBack, type AiRequest } from '../../src/ai/ai-provider.js';
import { AnthropicProvider, messagesUrl } from '../../src/ai/anthropic-provider.js';
import { createAiProvider } from '../../src/ai/create-provider.js';
import { parseConfig } from '../../src/platform/config.js';
import { FAKE_ANTHROPIC_KEY } from '../support/fake-anthropic-server.js';
import { useFakeAnthropic } from '../support/harness.js';

// What is the Messages API's own: the request, the answer's blocks and usage, the URL, the
// statuses it treats apart. What every provider promises alike (errors, deadline, Retry-After,
// redirects, aborts) is in providers-contract.test.ts.
const api = useFakeAnthropic();
const never = new AbortController().signal;

const ask = (prompt: string, more: Partial<AiRequest> = {}): AiRequest => ({
  prompt,
  history: [],
  ...more,
});

const provider = (options: Partial<ConstructorParameters<typeof AnthropicProvider>[0]> = {}) =>
  new AnthropicProvider({
    baseUrl: api.baseUrl,
    model: 'claude-fake',
    apiKey: FAKE_ANTHROPIC_KEY,
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

describe('Anthropic provider: the request', () => {
  it('posts to /v1/messages with the key, the API version and JSON, and returns the text', async () => {
    const reply = await provider().complete(ask('Hello'), never);
    expect(reply).toMatchObject({
      text: 'Fake model reply to: Hello',
      model: 'claude-fake',
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
      },
    });
    const request = api.requests.at(-1);
    expect(request?.path).toBe('/v1/messages');
    expect(request?.headers['x-api-key']).toBe(FAKE_ANTHROPIC_KEY);
    expect(request?.headers['anthropic-version']).toBe('2023-06-01');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.body).toEqual({
      model: 'claude-fake',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  it('sends the system prompt apart, history as user/assistant pairs, the settings, temperature at most 1', async () => {
    await provider().complete(
      ask('third', {
        system: 'You are terse.',
        history: [
          { prompt: 'first', reply: 'one' },
          { prompt: 'second', reply: 'two' },
        ],
        model: 'claude-channel',
        temperature: 1.6,
        maxTokens: 300,
      }),
      never,
    );
    expect(api.requests.at(-1)?.body).toEqual({
      model: 'claude-channel',
      max_tokens: 300,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'one' },
        { role: 'user', content: 'second' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'third' },
      ],
      temperature: 1,
    });
    await provider().complete(ask('x', { system: '', temperature: 0.3 }), never);
    expect(api.requests.at(-1)?.body).toEqual({
      model: 'claude-fake',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0.3,
    });
  });

  it('asks for JSON as a forced call of the reply tool, and returns its input as JSON text', async () => {
    const schema = {
      type: 'object',
      properties: { total: { type: 'number' } },
      required: ['total'],
    };
    api.enqueue({ toolInput: { total: 3 } });
    const reply = await provider().complete(
      ask('sum', { responseFormat: { json_schema: schema } }),
      never,
    );
    expect(reply.text).toBe('{"total":3}');
    expect(api.requests.at(-1)?.body).toMatchObject({
      tools: [{ name: 'reply', description: expect.any(String), input_schema: schema }],
      tool_choice: { type: 'tool', name: 'reply' },
    });

    api.enqueue({ toolInput: { a: [1, 'b'] } });
    const json = await provider().complete(ask('any', { responseFormat: 'json' }), never);
    expect(JSON.parse(json.text)).toEqual({ a: [1, 'b'] });
    expect(api.requests.at(-1)?.body).toMatchObject({
      tools: [{ name: 'reply', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'reply' },
    });

    await provider().complete(ask('plain', { responseFormat: 'text' }), never);
    expect(api.requests.at(-1)?.body).not.toHaveProperty('tools');
  });

  it('joins the text blocks of an answer', async () => {
    api.enqueue({
      body: {
        type: 'message',
        content: [
          { type: 'text', text: 'Part one, ' },
          { type: 'thinking', thinking: 'not shown' },
          { type: 'text', text: 'part two.' },
        ],
        usage: { input_tokens: 1, output_tokens: 2 },
      },
    });
    expect((await provider().complete(ask('x'), never)).text).toBe('Part one, part two.');
  });

  it('counts cached input in the prompt tokens', async () => {
    api.enqueue({
      usage: {
        input_tokens: 12,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 1000,
        output_tokens: 7,
      },
    });
    expect((await provider().complete(ask('x'), never)).usage).toEqual({
      prompt_tokens: 1112,
      completion_tokens: 7,
      total_tokens: 1119,
      cache_read_tokens: 1000,
      cache_write_tokens: 100,
    });
  });

  it('takes a base URL with or without /v1, or as the full endpoint', () => {
    expect(messagesUrl('https://api.anthropic.com').href).toBe(
      'https://api.anthropic.com/v1/messages',
    );
    expect(messagesUrl('https://api.anthropic.com/v1/').href).toBe(
      'https://api.anthropic.com/v1/messages',
    );
    expect(messagesUrl('http://gw.local/anthropic/v1/messages').href).toBe(
      'http://gw.local/anthropic/v1/messages',
    );
    expect(messagesUrl('http://gw.local/anthropic').href).toBe(
      'http://gw.local/anthropic/v1/messages',
    );
  });
});

describe('Anthropic provider: its own errors', () => {
  it('treats 408 as final, yet lets a fallback provider be asked', async () => {
    api.enqueue({ status: 408 });
    const error = await failure(provider().complete(ask('x'), never));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^The AI server refused the request \(HTTP 408\)/);
    expect(error.httpStatus).toBe(408);
    expect(fallsBack(error)).toBe(true);
  });

  it('is refused by the API with a wrong key, and never shows the key', async () => {
    const wrong = 'sk-ant-wrong-key-0000000000';
    const error = await failure(provider({ apiKey: wrong }).complete(ask('x'), never));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      'The AI server refused the request (HTTP 401): authentication_error: invalid x-api-key',
    );
    expect(error.message).not.toContain(wrong);
  });

  it('reports an answer without the reply tool call as retryable', async () => {
    api.enqueue({ body: { type: 'message', content: [{ type: 'text', text: 'no tool' }] } });
    const noTool = await failure(provider().complete(ask('x', { responseFormat: 'json' }), never));
    expect(noTool.retryable).toBe(true);
    expect(noTool.message).toMatch(/^The AI server sent an answer without the reply tool call: /);
  });

  it('honours the retry-after of a 529 (overloaded), as a date', async () => {
    const date = new Date(Date.now() + 120_000).toUTCString();
    api.enqueue({ status: 529, headers: { 'retry-after': date } });
    const overloaded = await failure(provider().complete(ask('x'), never));
    expect(overloaded.retryAfterMs).toBeGreaterThan(100_000);
  });
});

describe('AI_PROVIDER=anthropic', () => {
  it('needs AI_MODEL and AI_API_KEY, and defaults the base URL to Anthropic’s', () => {
    expect(() => parseConfig({ AI_PROVIDER: 'anthropic' })).toThrow(
      /^AI_MODEL is required when AI_PROVIDER=anthropic; AI_API_KEY is required when AI_PROVIDER=anthropic$/,
    );
    const config = parseConfig({
      AI_PROVIDER: 'anthropic',
      AI_MODEL: 'claude-sonnet-4-5',
      AI_API_KEY: 'sk-ant-x',
    });
    expect(createAiProvider(config.ai).name).toBe('anthropic');
  });
});

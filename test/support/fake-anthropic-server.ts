import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeReplyTo } from './fake-ai-server.js';

export const FAKE_ANTHROPIC_KEY = 'sk-ant-fake-key-7f3a9c2e4b1d';

/** How the fake Messages API answers one call. */
export interface FakeAnthropicReply {
  /** 200 unless given; other statuses answer with Anthropic's error body. */
  status?: number;
  /** The error of a non-2xx answer (a default per status otherwise). */
  error?: { type: string; message: string };
  /** The text block of a 2xx answer (default: `fakeReplyTo(prompt)`). */
  text?: string;
  /** The input of the `tool_use` block answered to a forced tool call (default `{}`). */
  toolInput?: unknown;
  /** The answer's content blocks as they are (a model calling tools), instead of the above. */
  content?: unknown[];
  /** Instead of the answer built from the above: a JSON value, or a string sent as it is. */
  body?: unknown;
  usage?: Record<string, number>;
  delayMs?: number;
  /** Never answer; the connection stays open until the client gives up or the server closes. */
  hang?: boolean;
  headers?: Record<string, string>;
}

export interface AnthropicRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** The content of the last message: the prompt. */
  prompt: string | undefined;
}

const ERROR_TYPES: Record<number, string> = {
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

/**
 * A loopback server answering as Anthropic's Messages API does: it refuses a request without the
 * right `x-api-key` (401), without `anthropic-version: 2023-06-01` or JSON, or whose body is not
 * a well-formed messages request (400), with Anthropic's error body; otherwise it answers with
 * `content` blocks (text, or the `tool_use` block of a forced tool call) and `usage`. Replies
 * are scripted per call (`enqueue`), else `defaultReply` answers; every request is recorded.
 */
export class FakeAnthropicServer {
  readonly requests: AnthropicRequest[] = [];
  defaultReply: FakeAnthropicReply = {};
  private readonly script: FakeAnthropicReply[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly waiters: { count: number; resolve: () => void }[] = [];

  private constructor(
    private readonly server: Server,
    /** The API's origin, as AI_BASE_URL. */
    readonly baseUrl: string,
    readonly apiKey: string,
  ) {}

  static async start(apiKey = FAKE_ANTHROPIC_KEY): Promise<FakeAnthropicServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new FakeAnthropicServer(server, `http://127.0.0.1:${port}`, apiKey);
    server.on('request', (req, res) => void fake.handle(req, res));
    return fake;
  }

  /** The settings that point the service's `anthropic` provider at this server. */
  env(): Record<string, string> {
    return {
      AI_PROVIDER: 'anthropic',
      AI_BASE_URL: this.baseUrl,
      AI_MODEL: 'claude-fake',
      AI_API_KEY: this.apiKey,
    };
  }

  enqueue(...replies: FakeAnthropicReply[]): void {
    this.script.push(...replies);
  }

  /** Resolves once `count` well-formed requests in all have arrived. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  reset(): void {
    this.requests.length = 0;
    this.script.length = 0;
    this.defaultReply = {};
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/messages') {
      return sendError(res, 404, { type: 'not_found_error', message: `${req.method} ${req.url}` });
    }
    if (req.headers['x-api-key'] !== this.apiKey) {
      return sendError(res, 401, { type: 'authentication_error', message: 'invalid x-api-key' });
    }
    if (req.headers['anthropic-version'] !== '2023-06-01') {
      const message = `anthropic-version: "${req.headers['anthropic-version']}" is not a valid version`;
      return sendError(res, 400, { type: 'invalid_request_error', message });
    }
    if (!req.headers['content-type']?.startsWith('application/json')) {
      const message = 'content-type must be application/json';
      return sendError(res, 400, { type: 'invalid_request_error', message });
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, { type: 'invalid_request_error', message: 'invalid JSON' });
    }
    const problem = bodyProblem(body);
    if (problem) return sendError(res, 400, { type: 'invalid_request_error', message: problem });

    const last = (body.messages as { content: unknown }[]).at(-1)?.content;
    const request: AnthropicRequest = {
      path: req.url,
      headers: req.headers,
      body,
      prompt: promptOf(last),
    };
    this.requests.push(request);
    for (const waiter of this.waiters.filter((w) => this.requests.length >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const reply = this.script.shift() ?? this.defaultReply;
    if (reply.hang) return;
    const send = () => this.send(res, request, reply);
    if (!reply.delayMs) return send();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      send();
    }, reply.delayMs);
    this.timers.add(timer);
  }

  private send(res: ServerResponse, request: AnthropicRequest, reply: FakeAnthropicReply): void {
    const status = reply.status ?? 200;
    if (status >= 300 && reply.body === undefined) {
      const type = ERROR_TYPES[status] ?? 'api_error';
      return sendError(
        res,
        status,
        reply.error ?? { type, message: `fake ${type}` },
        reply.headers,
      );
    }
    const body = reply.body ?? message(request, reply);
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
      ...reply.headers,
    });
    res.end(text);
  }
}

/** A Messages API answer: the forced tool's call when one is forced, else a text block. */
function message(request: AnthropicRequest, reply: FakeAnthropicReply) {
  const forced = request.body.tool_choice as { type?: string; name?: string } | undefined;
  const content =
    reply.content ??
    (forced?.type === 'tool'
      ? [{ type: 'tool_use', id: 'toolu_fake', name: forced.name, input: reply.toolInput ?? {} }]
      : [{ type: 'text', text: reply.text ?? fakeReplyTo(request.prompt) }]);
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: request.body.model,
    content,
    stop_reason: content.some((block) => (block as { type?: unknown }).type === 'tool_use')
      ? 'tool_use'
      : 'end_turn',
    stop_sequence: null,
    usage: reply.usage ?? {
      input_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 5,
    },
  };
}

/** What the real API would refuse in a body, in its words; undefined when it is well formed. */
function bodyProblem(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    return 'max_tokens: Field required';
  }
  if ('system' in body) {
    const problem = systemProblem(body.system);
    if (problem) return `system: ${problem}`;
  }
  const temperature = body.temperature;
  if (
    temperature !== undefined &&
    !(typeof temperature === 'number' && temperature >= 0 && temperature <= 1)
  ) {
    return 'temperature: Input should be less than or equal to 1';
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: Field required';
  for (const [i, entry] of (messages as { role?: unknown; content?: unknown }[]).entries()) {
    const role = i % 2 === 0 ? 'user' : 'assistant';
    if (entry?.role !== role)
      return `messages.${i}.role: expected ${role} (roles must alternate, starting with user)`;
    const problem = contentProblem(entry.content, role);
    if (problem) return `messages.${i}.content: ${problem}`;
  }
  if (messages.length % 2 === 0) return 'messages: the last message must be the user’s';
  if (body.tool_choice !== undefined) {
    const tools = body.tools as { name?: unknown; input_schema?: { type?: unknown } }[] | undefined;
    const choice = body.tool_choice as { type?: unknown; name?: unknown };
    if (!Array.isArray(tools) || tools.length === 0) return 'tools: Field required';
    for (const [i, tool] of tools.entries()) {
      if (tool.input_schema?.type !== 'object')
        return `tools.${i}.input_schema.type: Input should be "object"`;
    }
    if (choice.type === 'tool') {
      if (!tools.some((t) => t.name === choice.name))
        return 'tool_choice: the named tool is not in tools';
    } else if (!['auto', 'any', 'none'].includes(choice.type as string)) {
      return 'tool_choice.type: Input should be "auto", "any", "tool" or "none"';
    }
  }
  return undefined;
}

/**
 * A message's content: a string, or blocks (`text` and `tool_use` from the assistant, `text`
 * and `tool_result` from the user).
 */
/** The system prompt: a non-empty text, or non-empty text blocks (which may mark a cache end). */
function systemProblem(system: unknown): string | undefined {
  if (typeof system === 'string')
    return system ? undefined : 'text content blocks must be non-empty';
  if (!Array.isArray(system) || system.length === 0)
    return 'Input should be a valid string or list';
  for (const block of system as { type?: unknown; text?: unknown; cache_control?: unknown }[]) {
    if (block?.type !== 'text' || typeof block.text !== 'string' || !block.text) {
      return 'text content blocks must be non-empty';
    }
    const problem = cacheControlProblem(block.cache_control);
    if (problem) return problem;
  }
  return undefined;
}

/** `cache_control` as the API takes it: `{type: "ephemeral", ttl?: "5m" | "1h"}`. */
function cacheControlProblem(control: unknown): string | undefined {
  if (control === undefined) return undefined;
  const { type, ttl, ...rest } = control as { type?: unknown; ttl?: unknown };
  if (type !== 'ephemeral' || Object.keys(rest).length > 0) return 'cache_control: invalid';
  if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') return 'cache_control.ttl: invalid';
  return undefined;
}

function contentProblem(content: unknown, role: 'user' | 'assistant'): string | undefined {
  if (typeof content === 'string') return undefined;
  if (!Array.isArray(content) || content.length === 0)
    return 'Input should be a valid string or list';
  const allowed = role === 'user' ? ['text', 'image', 'tool_result'] : ['text', 'tool_use'];
  for (const block of content as {
    type?: unknown;
    id?: unknown;
    tool_use_id?: unknown;
    cache_control?: unknown;
  }[]) {
    if (!allowed.includes(block?.type as string))
      return `a ${role} message cannot hold a "${String(block?.type)}" block`;
    const cacheProblem = cacheControlProblem(block.cache_control);
    if (cacheProblem) return cacheProblem;
    if (block.type === 'image') {
      const problem = imageProblem(block as { source?: unknown });
      if (problem) return problem;
    }
    if (block.type === 'tool_use' && typeof block.id !== 'string')
      return 'tool_use.id: Field required';
    if (block.type === 'tool_result' && typeof block.tool_use_id !== 'string')
      return 'tool_result.tool_use_id: Field required';
  }
  return undefined;
}

/** A user message's text: the content itself, or its `text` block beside images. */
function promptOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const block = (content as { type?: unknown; text?: unknown }[]).find((b) => b?.type === 'text');
  return typeof block?.text === 'string' ? block.text : undefined;
}

/** An `image` block as the API takes it: base64 data of an accepted media type. */
function imageProblem(block: { source?: unknown }): string | undefined {
  const source = block.source as { type?: unknown; media_type?: unknown; data?: unknown };
  if (source?.type !== 'base64') return 'image.source.type: Input should be "base64"';
  if (!['image/png', 'image/jpeg', 'image/gif', 'image/webp'].includes(source.media_type as string))
    return 'image.source.media_type: Input should be a supported image type';
  if (typeof source.data !== 'string' || !source.data) return 'image.source.data: Field required';
  return undefined;
}

function sendError(
  res: ServerResponse,
  status: number,
  error: { type: string; message: string },
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ type: 'error', error }));
}

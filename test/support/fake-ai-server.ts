import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** How the fake model answers one call. */
export interface FakeReply {
  /** 200 unless given. */
  status?: number;
  /** A JSON value, or a string sent as it is; a 2xx without it is a chat completion of `fakeReplyTo(prompt)`. */
  body?: unknown;
  /** Answer only after this long (the server waits, not the test). */
  delayMs?: number;
  /** Never answer; the connection stays open until the client gives up or the server closes. */
  hang?: boolean;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** The content of the last message, the prompt, when the body is a chat-completions request. */
  prompt: string | undefined;
  /** When it arrived and when its answer was sent (`performance.now()`, ms). */
  receivedAt: number;
  answeredAt?: number;
}

/** A message's text: the content itself, or its `text` part beside images. */
function promptOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const part = (content as { type?: unknown; text?: unknown }[]).find((p) => p?.type === 'text');
  return typeof part?.text === 'string' ? part.text : undefined;
}

export const fakeReplyTo = (prompt: string | undefined) => `Fake model reply to: ${prompt}`;

/**
 * A real loopback HTTP server speaking the OpenAI chat-completions protocol. Replies are
 * scripted per call (`enqueue`), else `defaultReply` answers; every request is recorded, and
 * every reply actually delivered is counted per prompt.
 */
export class FakeAiServer {
  readonly requests: RecordedRequest[] = [];
  /** 2xx answers fully sent, by prompt. */
  readonly answered = new Map<string, number>();
  defaultReply: FakeReply | ((request: RecordedRequest) => FakeReply) = {};
  private readonly script: FakeReply[] = [];
  private readonly waiters: { count: number; resolve: () => void }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    /** The API root to use as AI_BASE_URL, e.g. http://127.0.0.1:41234/v1 */
    readonly baseUrl: string,
  ) {}

  /** The settings that point the service's `openai` provider at this server. */
  env(): Record<string, string> {
    return { AI_PROVIDER: 'openai', AI_BASE_URL: this.baseUrl, AI_MODEL: 'fake-model' };
  }

  /**
   * `keepAliveMs`: how long an idle connection is kept open (Node's 5 s by default); real
   * model servers keep them far longer, so what the client leaves open stays open.
   */
  static async start({ keepAliveMs }: { keepAliveMs?: number } = {}): Promise<FakeAiServer> {
    const server = createServer();
    if (keepAliveMs !== undefined) server.keepAliveTimeout = keepAliveMs;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const fake = new FakeAiServer(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    );
    server.on('request', (req, res) => void fake.handle(req, res));
    return fake;
  }

  /** The next calls get these replies, in order. */
  enqueue(...replies: FakeReply[]): void {
    this.script.push(...replies);
  }

  /** Resolves once `count` requests in all have arrived. */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Forgets recorded requests, answers and scripted replies (between tests). */
  reset(): void {
    this.requests.length = 0;
    this.answered.clear();
    this.script.length = 0;
    this.defaultReply = {};
  }

  /** The prompts of all requests, in arrival order. */
  prompts(): (string | undefined)[] {
    return this.requests.map((request) => request.prompt);
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
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // recorded as the raw text
    }
    const content = (body as { messages?: { content?: unknown }[] })?.messages?.at(-1)?.content;
    const request: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      prompt: promptOf(content),
      receivedAt: performance.now(),
    };
    this.requests.push(request);
    for (const waiter of this.waiters.filter((w) => this.requests.length >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }

    const scripted = this.script.shift();
    const reply =
      scripted ??
      (typeof this.defaultReply === 'function' ? this.defaultReply(request) : this.defaultReply);
    if (reply.hang) return;
    const send = () => this.send(res, request, reply);
    if (!reply.delayMs) return send();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      send();
    }, reply.delayMs);
    this.timers.add(timer);
  }

  private send(res: ServerResponse, request: RecordedRequest, reply: FakeReply): void {
    const status = reply.status ?? 200;
    const body =
      reply.body !== undefined
        ? reply.body
        : status < 300
          ? chatCompletion(fakeReplyTo(request.prompt))
          : { error: { message: `fake failure ${status}`, type: 'server_error' } };
    const ok = status >= 200 && status < 300;
    res.on('finish', () => {
      request.answeredAt = performance.now();
      if (ok && request.prompt !== undefined) {
        this.answered.set(request.prompt, (this.answered.get(request.prompt) ?? 0) + 1);
      }
    });
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': typeof body === 'string' ? 'text/plain' : 'application/json',
      ...reply.headers,
    });
    res.end(text);
  }
}

export function chatCompletion(content: string | null) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: 1,
      completion_tokens: 1,
      total_tokens: 2,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    },
  };
}

/** An OpenAI answer asking for these tool calls (`[name, arguments text]`), ids `call_<name>_<n>`. */
export function toolCallsAnswer(...calls: [string, string][]) {
  const answer = chatCompletion(null);
  const message = answer.choices[0]?.message as Record<string, unknown>;
  message.tool_calls = calls.map(([name, args], i) => ({
    id: `call_${name}_${i + 1}`,
    type: 'function',
    function: { name, arguments: args },
  }));
  return { body: answer };
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ChatKind = 'slack' | 'slack-webhook' | 'telegram' | 'discord' | 'teams';

/** One message a platform took, as its API read it. */
export interface ChatMessage {
  kind: ChatKind;
  /** Slack's channel, Telegram's chat_id, Discord's thread_id, the webhook's path otherwise. */
  to: string;
  text: string;
  /** Slack's thread_ts, Telegram's reply_parameters.message_id. */
  thread?: string;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

/**
 * A scripted answer, instead of the platform's own, for the next request of a kind; `'pass'`
 * lets that request through to the platform's own answer.
 */
export type ScriptedAnswer =
  'pass' | { status: number; body?: unknown; headers?: Record<string, string> };

/**
 * Loopback stand-ins for Slack (Web API `chat.postMessage` and Incoming Webhooks), Telegram's
 * Bot API `sendMessage`, Discord and Teams webhooks, answering as their documentation says: a
 * wrong token or URL is refused the way each platform refuses it, a body missing what the API
 * requires is a 400, too long a text too. Only what passes is recorded in `messages`.
 */
export class FakeChats {
  readonly messages: ChatMessage[] = [];
  /** Every request, accepted or not. */
  requests = 0;
  readonly slackTokens = new Set<string>();
  readonly telegramTokens = new Set<string>();
  /** Where each bot's updates go, as `setWebhook` was told (bot token → url and secret). */
  readonly telegramWebhooks = new Map<string, { url: string; secret_token?: string }>();
  /** Webhook paths that exist (`/slack-hooks/...`, `/discord/...`, `/teams/...`). */
  readonly webhookPaths = new Set<string>();
  /** Fails this share of requests (0..1) with a 500 / 429, deterministically, before reading them. */
  failureRate = 0;
  /**
   * Answers echo the secret they were sent with, as a careless proxy might: Telegram's bot token,
   * a Slack webhook's URL. What Brain Logs keeps of an answer must cut it out.
   */
  echoSecrets = false;
  private readonly scripts = new Map<ChatKind, ScriptedAnswer[]>();
  private seed = 1;

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<FakeChats> {
    const server = createServer({ keepAliveTimeout: 30_000 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const fake = new FakeChats(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    server.on('request', (req, res) => void fake.handle(req, res));
    return fake;
  }

  /** SLACK_API_URL and TELEGRAM_API_URL pointing here. */
  get env(): Record<string, string> {
    return {
      SLACK_API_URL: `${this.baseUrl}/slack/api/`,
      TELEGRAM_API_URL: `${this.baseUrl}/telegram`,
    };
  }

  /** A webhook URL of a kind that exists on this fake. */
  webhookUrl(kind: 'slack-webhook' | 'discord' | 'teams', name = 'one'): string {
    const path = {
      'slack-webhook': `/slack-hooks/services/T0/B0/${name}`,
      discord: `/discord/api/webhooks/1/${name}`,
      teams: `/teams/workflows/${name}/triggers/manual/paths/invoke`,
    }[kind];
    this.webhookPaths.add(path);
    return this.baseUrl + path;
  }

  /** The next requests of `kind` get these answers, in order. */
  script(kind: ChatKind, ...answers: ScriptedAnswer[]): void {
    this.scripts.set(kind, [...(this.scripts.get(kind) ?? []), ...answers]);
  }

  of(kind: ChatKind): ChatMessage[] {
    return this.messages.filter((message) => message.kind === kind);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.requests++;
    const url = new URL(req.url ?? '/', this.baseUrl);
    const kind = kindOf(url.pathname);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
    };
    if (!kind || req.method !== 'POST') return answer(404, { error: 'not found' });
    const setWebhook = /^\/telegram\/bot([^/]+)\/setWebhook$/.exec(url.pathname);
    if (setWebhook) return answer(...this.setTelegramWebhook(setWebhook[1] ?? '', req, chunks));
    const scripted = this.scripts.get(kind)?.shift();
    if (scripted && scripted !== 'pass')
      return answer(scripted.status, scripted.body ?? '', scripted.headers);
    if (this.failureRate > 0 && this.random() < this.failureRate)
      return answer(kind === 'telegram' ? 429 : 500, transientError(kind), { 'retry-after': '0' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return answer(400, { ok: false, error: 'invalid_json' });
    }
    const [status, reply] = this.read(kind, url, req, body);
    answer(status, reply);
  }

  /** Telegram's `setWebhook`, its parameters form-encoded (as curl -d sends them) or JSON. */
  private setTelegramWebhook(
    encodedToken: string,
    req: IncomingMessage,
    chunks: Buffer[],
  ): [number, unknown] {
    const token = decodeURIComponent(encodedToken);
    if (!this.telegramTokens.has(token))
      return [401, { ok: false, error_code: 401, description: 'Unauthorized' }];
    const text = Buffer.concat(chunks).toString('utf8');
    const params = req.headers['content-type']?.startsWith('application/json')
      ? new URLSearchParams(JSON.parse(text) as Record<string, string>)
      : new URLSearchParams(text);
    const url = params.get('url');
    if (!url?.startsWith('https://') && !url?.startsWith('http://'))
      return [400, { ok: false, error_code: 400, description: 'Bad Request: bad webhook' }];
    this.telegramWebhooks.set(token, {
      url,
      secret_token: params.get('secret_token') ?? undefined,
    });
    return [200, { ok: true, result: true, description: 'Webhook was set' }];
  }

  private read(
    kind: ChatKind,
    url: URL,
    req: IncomingMessage,
    body: Record<string, unknown>,
  ): [number, unknown] {
    const record = (to: string, text: string, thread?: string) =>
      this.messages.push({ kind, to, text, thread, body, headers: req.headers });
    switch (kind) {
      case 'slack': {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!token || !this.slackTokens.has(token))
          return [200, { ok: false, error: 'invalid_auth' }];
        if (typeof body.channel !== 'string' || !body.channel)
          return [200, { ok: false, error: 'channel_not_found' }];
        if (typeof body.text !== 'string' || !body.text)
          return [200, { ok: false, error: 'no_text' }];
        const ts = `${1700000000 + this.messages.length}.000100`;
        record(body.channel, body.text, body.thread_ts as string | undefined);
        return [200, { ok: true, channel: body.channel, ts }];
      }
      case 'telegram': {
        const token = /^\/telegram\/bot([^/]+)\/sendMessage$/.exec(url.pathname)?.[1];
        if (!token || !this.telegramTokens.has(decodeURIComponent(token)))
          return [401, { ok: false, error_code: 401, description: 'Unauthorized' }];
        const text = body.text;
        if (typeof text !== 'string' || text.trim() === '')
          return [
            400,
            { ok: false, error_code: 400, description: 'Bad Request: message text is empty' },
          ];
        if (text.length > 4096)
          return [
            400,
            { ok: false, error_code: 400, description: 'Bad Request: message is too long' },
          ];
        if (body.chat_id === undefined)
          return [
            400,
            { ok: false, error_code: 400, description: 'Bad Request: chat_id is empty' },
          ];
        const replyTo = (body.reply_parameters as { message_id?: number } | undefined)?.message_id;
        record(String(body.chat_id), text, replyTo === undefined ? undefined : String(replyTo));
        const echo = this.echoSecrets ? { via: `bot${token}` } : {};
        return [200, { ok: true, result: { message_id: this.messages.length, text, ...echo } }];
      }
      case 'discord': {
        if (!this.webhookPaths.has(url.pathname))
          return [404, { message: 'Unknown Webhook', code: 10015 }];
        const content = body.content;
        if (typeof content !== 'string' || content.length > 2000 || content === '')
          return [400, { message: 'Invalid Form Body', code: 50035 }];
        record(url.pathname, content, url.searchParams.get('thread_id') ?? undefined);
        return [200, { id: String(this.messages.length), content }];
      }
      case 'slack-webhook':
        if (!this.webhookPaths.has(url.pathname)) return [404, 'no_service'];
        if (typeof body.text !== 'string' || !body.text) return [400, 'invalid_payload'];
        record(url.pathname, body.text);
        return [200, this.echoSecrets ? `ok, posted to ${this.baseUrl}${url.pathname}` : 'ok'];
      case 'teams': {
        if (!this.webhookPaths.has(url.pathname)) return [404, { error: { code: 'NotFound' } }];
        const text = teamsText(body);
        if (text === undefined) return [400, { error: { code: 'InvalidRequestContent' } }];
        record(url.pathname, text);
        return [202, ''];
      }
    }
  }

  /** A fixed sequence (a linear congruential generator), so a failing run can be repeated. */
  private random(): number {
    this.seed = (this.seed * 1103515245 + 12345) % 2 ** 31;
    return this.seed / 2 ** 31;
  }
}

function kindOf(path: string): ChatKind | undefined {
  if (path === '/slack/api/chat.postMessage') return 'slack';
  if (path.startsWith('/slack-hooks/')) return 'slack-webhook';
  if (path.startsWith('/telegram/')) return 'telegram';
  if (path.startsWith('/discord/')) return 'discord';
  if (path.startsWith('/teams/')) return 'teams';
  return undefined;
}

function transientError(kind: ChatKind): unknown {
  if (kind === 'telegram')
    return {
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 0',
      parameters: { retry_after: 0 },
    };
  return { error: 'temporarily unavailable' };
}

/** The text of the Adaptive Card's TextBlock, as a Teams workflow reads it; undefined if malformed. */
function teamsText(body: Record<string, unknown>): string | undefined {
  const attachment = (body.attachments as Record<string, unknown>[] | undefined)?.[0];
  const card = attachment?.content as Record<string, unknown> | undefined;
  const block = (card?.body as Record<string, unknown>[] | undefined)?.[0];
  if (
    body.type !== 'message' ||
    attachment?.contentType !== 'application/vnd.microsoft.card.adaptive' ||
    card?.type !== 'AdaptiveCard' ||
    block?.type !== 'TextBlock' ||
    typeof block.text !== 'string'
  )
    return undefined;
  return block.text;
}

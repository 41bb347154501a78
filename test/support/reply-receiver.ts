import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** How the receiver answers one message. */
export interface ReceiverAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** The answer's body; `ok`, or `answer <status>` for a status of 300 or more, when not given. */
  body?: string;
  /** Never answer: the connection stays open until the sender gives up. */
  hang?: boolean;
  /** Close the connection without answering (a reset). */
  reset?: boolean;
}

/** One message as it arrived, and whether the standardwebhooks package accepted it. */
export interface ReceivedMessage {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  at: number;
  /** The secrets (of those given to the receiver) whose signature verified. */
  verifiedWith: string[];
}

/**
 * A real loopback HTTP server standing in for a reply URL. Each message is checked with the
 * Standard Webhooks reference library against every secret the test gave it; answers are
 * scripted per message (`enqueue`), else 200.
 */
export class ReplyReceiver {
  readonly messages: ReceivedMessage[] = [];
  secrets: string[] = [];
  private readonly script: ReceiverAnswer[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<ReplyReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new ReplyReceiver(server, (server.address() as AddressInfo).port);
    server.on('request', (req, res) => void receiver.handle(req, res));
    return receiver;
  }

  /** A URL on this receiver; `host` may name it differently (`localhost`). */
  url(path = '/replies', host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  enqueue(...answers: ReceiverAnswer[]): void {
    this.script.push(...answers);
  }

  /** The messages carrying one webhook-id, in arrival order. */
  withId(webhookId: string): ReceivedMessage[] {
    return this.messages.filter((message) => message.headers['webhook-id'] === webhookId);
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
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = req.headers;
    const verifiedWith = this.secrets.filter((secret) => {
      try {
        new Webhook(secret).verify(body, {
          'webhook-id': String(headers['webhook-id']),
          'webhook-timestamp': String(headers['webhook-timestamp']),
          'webhook-signature': String(headers['webhook-signature']),
        });
        return true;
      } catch {
        return false;
      }
    });
    let json: ReceivedMessage['json'];
    try {
      json = JSON.parse(body) as ReceivedMessage['json'];
    } catch {
      json = { type: '', timestamp: '', data: {} };
    }
    this.messages.push({ path: req.url ?? '', headers, body, json, at: Date.now(), verifiedWith });
    const answer = this.script.shift() ?? {};
    if (answer.hang) return;
    if (answer.reset) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
    res.end(
      answer.body ?? (answer.status && answer.status >= 300 ? `answer ${answer.status}` : 'ok'),
    );
  }
}

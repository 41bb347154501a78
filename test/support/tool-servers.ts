import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A request as the server received it. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function listening(server: http.Server): Promise<string> {
  // Idle connections stay open a minute, as real servers keep them: whatever the service leaves
  // open stays open.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closed(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** An HTTP endpoint standing for an `http` tool: records requests, answers as it is told. */
export class ToolEndpoint {
  readonly requests: ReceivedRequest[] = [];
  /** The next answers' status, body (JSON when not a string) and extra headers. */
  answer: { status: number; body: unknown; headers?: Record<string, string> } = {
    status: 200,
    body: { ok: true },
  };

  private readonly server: http.Server;
  baseUrl = '';

  private constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.requests.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body,
        });
        const { status, body: answer, headers } = this.answer;
        const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
      });
    });
  }

  static async start(): Promise<ToolEndpoint> {
    const endpoint = new ToolEndpoint();
    endpoint.baseUrl = await listening(endpoint.server);
    return endpoint;
  }

  reset(): void {
    this.requests.length = 0;
    this.answer = { status: 200, body: { ok: true } };
  }

  close(): Promise<void> {
    return closed(this.server);
  }
}

/**
 * A real MCP server over Streamable HTTP, made of the SDK's own server classes (McpServer and
 * StreamableHTTPServerTransport, one session each), listing three tools.
 */
export class McpTestServer {
  readonly requests: { method: string; headers: http.IncomingHttpHeaders }[] = [];
  /** The JSON-RPC methods clients asked for (`initialize`, `tools/list`, …), in order. */
  readonly rpcMethods: string[] = [];
  /** The `tools/call`s the server ran: the tool's name and its arguments. */
  readonly called: { name: string; arguments: Record<string, unknown> }[] = [];
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  private readonly server: http.Server;
  url = '';

  private constructor() {
    this.server = http.createServer((req, res) => {
      void this.handle(req, res).catch(() => res.writeHead(500).end());
    });
  }

  /** Sessions open on the server now (ended by the client's DELETE). */
  get openSessions(): number {
    return this.sessions.size;
  }

  static async start(): Promise<McpTestServer> {
    const mcp = new McpTestServer();
    mcp.url = `${await listening(mcp.server)}/mcp`;
    return mcp;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.requests.push({ method: req.method ?? '', headers: req.headers });
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (!transport) {
      if (id !== undefined) return void res.writeHead(404).end();
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (session) => void this.sessions.set(session, created),
      });
      created.onclose = () => {
        if (created.sessionId) this.sessions.delete(created.sessionId);
      };
      await toolsServer((name, args) => this.called.push({ name, arguments: args })).connect(
        created,
      );
      transport = created;
    }
    await transport.handleRequest(req, res, await this.readRpc(req));
  }

  /** A POST's JSON-RPC message (or batch), its methods recorded, for the transport to handle. */
  private async readRpc(req: http.IncomingMessage): Promise<unknown> {
    if (req.method !== 'POST') return undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    for (const message of Array.isArray(body) ? body : [body]) {
      const { method } = message as { method?: unknown };
      if (typeof method === 'string') this.rpcMethods.push(method);
    }
    return body;
  }

  reset(): void {
    this.rpcMethods.length = 0;
    this.requests.length = 0;
    this.called.length = 0;
  }

  async close(): Promise<void> {
    for (const transport of this.sessions.values()) await transport.close();
    await closed(this.server);
  }
}

function toolsServer(
  called: (name: string, args: Record<string, unknown>) => void = () => undefined,
): McpServer {
  const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
  server.registerTool(
    'weather',
    { description: 'The weather of a city', inputSchema: { city: z.string() } },
    ({ city }) => {
      called('weather', { city });
      if (city === 'Atlantis') {
        return { content: [{ type: 'text', text: 'No such city' }], isError: true };
      }
      return {
        content: [
          { type: 'text', text: `Sunny in ${city}` },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        ],
      };
    },
  );
  server.registerTool(
    'forecast',
    { description: 'Three days of weather', inputSchema: { city: z.string() } },
    ({ city }) => {
      called('forecast', { city });
      return { content: [{ type: 'text', text: `Rain in ${city}` }] };
    },
  );
  server.registerTool('time', { description: 'The time now' }, () => ({
    content: [{ type: 'text', text: new Date().toISOString() }],
  }));
  return server;
}

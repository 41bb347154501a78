import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { guardedFetch } from '../outbound/guarded-fetch.js';
import type { ListedTool, ToolRunner, ToolTest } from './tool-runner.js';
import type { ToolRow } from './tools-repo.js';

/** Pages of `tools/list` read at most: a server listing tools without end is not followed. */
const MAX_LIST_PAGES = 10;

/** A tool as an MCP server lists it. */
export interface ServerTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What a `tools/call` gave: its contents as text (others named), and whether it is an error. */
export interface ServerToolResult {
  text: string;
  isError: boolean;
}

/**
 * One session with an `mcp` tool's server, as a client of the Model Context Protocol over
 * Streamable HTTP only (the SDK's own client and transport): `initialize`,
 * `notifications/initialized`, then `tools/list` and `tools/call`; JSON or SSE answers,
 * `Mcp-Session-Id` kept by the transport. Its requests go through a fetch of its own that
 * checks addresses at connect time and follows no redirect; `close()` ends the session and
 * every connection it opened. Each request is bounded by the tool's `timeout_ms`.
 */
export class McpSession {
  private constructor(
    private readonly tool: ToolRow,
    private readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
    private readonly outbound: { close: () => void },
  ) {}

  /** Connects and initializes; rejects with a message naming the failure. */
  static async open(tool: ToolRow, allowPrivate: boolean): Promise<McpSession> {
    const outbound = guardedFetch({ allowPrivate, setting: 'TOOLS_ALLOW_PRIVATE' });
    const transport = new StreamableHTTPClientTransport(new URL(tool.url), {
      fetch: outbound.fetch,
      // Left to the fetch above, which follows none.
      redirectPolicy: 'follow',
      requestInit: { headers: tool.headers },
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1_000,
        maxReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 1,
      },
    });
    const client = new Client({ name: 'hookprompt', version: '1' });
    const session = new McpSession(tool, client, transport, outbound);
    const deadline = AbortSignal.timeout(tool.timeout_ms);
    try {
      await client.connect(transport, { timeout: tool.timeout_ms, signal: deadline });
    } catch (error) {
      await session.close();
      throw new Error(deadline.aborted ? timedOut(tool) : messageOf(error), { cause: error });
    }
    return session;
  }

  /** Every tool the server lists (up to MAX_LIST_PAGES pages). */
  async listTools(): Promise<ServerTool[]> {
    const deadline = AbortSignal.timeout(this.tool.timeout_ms);
    const limits = { timeout: this.tool.timeout_ms, signal: deadline };
    const tools: ServerTool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const listed = await this.client.listTools(cursor ? { cursor } : undefined, limits);
        for (const { name, description, inputSchema } of listed.tools) {
          tools.push({ name, description: description ?? '', inputSchema });
        }
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
    } catch (error) {
      throw new Error(deadline.aborted ? timedOut(this.tool) : messageOf(error), { cause: error });
    }
    return tools;
  }

  /** One `tools/call`; rejects with a message when the server gave no result. */
  async callTool(
    name: string,
    input: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<ServerToolResult> {
    const deadline = AbortSignal.timeout(this.tool.timeout_ms);
    const aborted = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      const result = await this.client.callTool({ name, arguments: input }, undefined, {
        timeout: this.tool.timeout_ms,
        signal: aborted,
      });
      const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
      return { text: contentText(content), isError: result.isError === true };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new Error(deadline.aborted ? timedOut(this.tool) : messageOf(error), { cause: error });
    }
  }

  /** Ends the session (a DELETE, within the tool's limit) and closes every connection. */
  async close(): Promise<void> {
    await Promise.race([
      this.transport.terminateSession().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, Math.min(this.tool.timeout_ms, 2_000)).unref()),
    ]);
    await this.client.close().catch(() => undefined);
    this.outbound.close();
  }
}

/** A `tools/call` result's contents as text: text parts as they are, others named (`[image]`). */
function contentText(content: readonly unknown[]): string {
  return content
    .map((part) => {
      const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
      if (type === 'text' && typeof text === 'string') return text;
      return `[${typeof type === 'string' ? type : 'content'}]`;
    })
    .join('\n');
}

/**
 * Tests an `mcp` tool: a session opened, every tool the server lists, and whether the tool's
 * `allowed_tools` names each; the session ended before the answer.
 */
export class McpToolRunner implements ToolRunner {
  constructor(private readonly options: { allowPrivate: boolean }) {}

  async test(tool: ToolRow): Promise<ToolTest> {
    let session: McpSession | undefined;
    const allowed = new Set(tool.allowed_tools ?? []);
    try {
      session = await McpSession.open(tool, this.options.allowPrivate);
      const tools: ListedTool[] = (await session.listTools()).map(({ name, description }) => ({
        name,
        description,
        allowed: allowed.has(name),
      }));
      return { ok: true, tools };
    } catch (error) {
      return { ok: false, error: messageOf(error) };
    } finally {
      await session?.close();
    }
  }
}

function timedOut(tool: ToolRow): string {
  return `No answer within ${tool.timeout_ms} ms.`;
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown })?.cause;
  return cause instanceof Error && !message.includes(cause.message)
    ? `${message}: ${cause.message}`
    : message;
}

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { guardedFetch } from '../outbound/guarded-fetch.js';
import type { ListedTool, ToolRunner, ToolTest } from './tool-runner.js';
import type { ToolRow } from './tools-repo.js';

/** Pages of `tools/list` read at most: a server listing tools without end is not followed. */
const MAX_LIST_PAGES = 10;

/**
 * Speaks the Model Context Protocol to an `mcp` tool's server as a client, over Streamable HTTP
 * only (the SDK's own client and transport): `initialize`, `notifications/initialized`,
 * `tools/list`; JSON or SSE answers, `Mcp-Session-Id` kept by the transport. Its requests go
 * through a fetch of its own that checks addresses at connect time and follows no redirect;
 * the session is ended and every connection closed before the answer.
 */
export class McpToolRunner implements ToolRunner {
  constructor(private readonly options: { allowPrivate: boolean }) {}

  async test(tool: ToolRow): Promise<ToolTest> {
    const outbound = guardedFetch({
      allowPrivate: this.options.allowPrivate,
      setting: 'TOOLS_ALLOW_PRIVATE',
    });
    const deadline = AbortSignal.timeout(tool.timeout_ms);
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
    const limits = { timeout: tool.timeout_ms, signal: deadline };
    const allowed = new Set(tool.allowed_tools ?? []);
    try {
      await client.connect(transport, limits);
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const listed = await client.listTools(cursor ? { cursor } : undefined, limits);
        for (const { name, description } of listed.tools) {
          tools.push({ name, description: description ?? '', allowed: allowed.has(name) });
        }
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      return { ok: true, tools };
    } catch (error) {
      return { ok: false, error: deadline.aborted ? timedOut(tool) : messageOf(error) };
    } finally {
      // A server keeping sessions is told this one ended (a DELETE), within the tool's limit.
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, Math.min(tool.timeout_ms, 2_000)).unref()),
      ]);
      await client.close().catch(() => undefined);
      outbound.close();
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

import { performance } from 'node:perf_hooks';
import type { OfferedTool } from '../ai/tool-protocol.js';
import type { HttpToolRunner } from './http-tool-runner.js';
import { McpSession } from './mcp-tool-runner.js';
import type { ToolListCache } from './tool-list-cache.js';
import { resultText, type ToolOutcome } from './tool-runner.js';
import type { ToolRow } from './tools-repo.js';

/** The most characters of a tool name a provider takes. */
const MAX_OFFERED_NAME = 64;

/** An attempt's tools could not be opened (an MCP server did not list its tools). */
export class ToolboxUnavailable extends Error {
  override name = 'ToolboxUnavailable';
}

/** One tool as offered to the model, and the workspace tool behind it. */
export interface ToolEntry {
  offered: OfferedTool;
  tool: ToolRow;
  /** For an `mcp` tool: the server's name of the tool (the offered one is `<name>__<it>`). */
  serverTool?: string;
}

/**
 * The tools of one attempt at an event: what its channel offers the model (an `http` tool as
 * saved; of an `mcp` server, the tools it lists that `allowed_tools` names, each as
 * `<name>__<server tool>` cut to 64 characters), and the means to call them. A name not in
 * `entry()` is not offered, and nothing is sent for it. `close()` ends the MCP sessions.
 */
export class Toolbox {
  private constructor(
    private readonly entries: ReadonlyMap<string, ToolEntry>,
    private readonly sessions: ReadonlyMap<string, McpSession>,
    private readonly http: HttpToolRunner,
  ) {}

  /**
   * Opens the tools of `rows`: each `mcp` server's session and its tool list (from `lists` when
   * listed lately), concurrently. Rejects with a message naming the tool whose server could not
   * be listed.
   */
  static async open(
    rows: readonly ToolRow[],
    http: HttpToolRunner,
    lists: ToolListCache,
    allowPrivate: boolean,
  ): Promise<Toolbox> {
    const sessions = new Map<string, McpSession>();
    const listed = new Map<string, Awaited<ReturnType<McpSession['listTools']>>>();
    const mcp = rows.filter((row) => row.kind === 'mcp');
    const opened = await Promise.allSettled(
      mcp.map(async (row) => {
        const session = await McpSession.open(row, allowPrivate);
        sessions.set(row.id, session);
        listed.set(row.id, await lists.get(row, () => session.listTools()));
      }),
    );
    const failed = opened.findIndex((result) => result.status === 'rejected');
    if (failed >= 0) {
      await Promise.all([...sessions.values()].map((session) => session.close()));
      const reason = (opened[failed] as PromiseRejectedResult).reason as unknown;
      const message = reason instanceof Error ? reason.message : String(reason);
      throw new ToolboxUnavailable(
        `The MCP server of the tool "${mcp[failed]?.name}" could not list its tools: ${message}`,
      );
    }
    const entries = new Map<string, ToolEntry>();
    for (const tool of [...rows].sort((a, b) => a.name.localeCompare(b.name))) {
      if (tool.kind === 'http') {
        const parameters = tool.input_schema ?? { type: 'object' };
        entries.set(tool.name, {
          tool,
          offered: { name: tool.name, description: tool.description, parameters },
        });
        continue;
      }
      const allowed = new Set(tool.allowed_tools ?? []);
      for (const server of listed.get(tool.id) ?? []) {
        if (!allowed.has(server.name)) continue;
        const name = `${tool.name}__${server.name}`.slice(0, MAX_OFFERED_NAME);
        if (entries.has(name)) continue;
        const offered = {
          name,
          description: server.description,
          parameters: withoutDialect(server.inputSchema),
        };
        entries.set(name, { tool, offered, serverTool: server.name });
      }
    }
    return new Toolbox(entries, sessions, http);
  }

  /** What the model is offered, in a stable order. */
  offered(): OfferedTool[] {
    return [...this.entries.values()].map((entry) => entry.offered);
  }

  /** The tool offered under `name`; undefined: not offered (a call to it is refused). */
  entry(name: string): ToolEntry | undefined {
    return this.entries.get(name);
  }

  /** Calls the tool: `input` checked against its schema and its placeholders put back. */
  async call(
    entry: ToolEntry,
    input: Record<string, unknown>,
    argumentsText: string,
    eventId: string,
    signal?: AbortSignal,
  ): Promise<ToolOutcome> {
    const session = this.sessions.get(entry.tool.id);
    if (!session || entry.serverTool === undefined) {
      return this.http.call(entry.tool, input, argumentsText, eventId, signal);
    }
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const result = await session.callTool(entry.serverTool, input, signal);
      const status = result.isError ? 'error' : 'ok';
      return { status, httpStatus: null, text: resultText(result.text), latencyMs: latency() };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const text = error instanceof Error ? error.message : String(error);
      return { status: 'error', httpStatus: null, text, latencyMs: latency() };
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.close()));
  }
}

/**
 * A server's input schema without its `$schema`: servers name the draft they were written for
 * (the SDK's draft-07), which the checkers of the service do not load, and the keywords the
 * arguments are checked with read the same in every draft a tool's schema uses.
 */
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  if (!('$schema' in schema)) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

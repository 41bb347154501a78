import type { ServerTool } from './mcp-tool-runner.js';
import type { ToolRow } from './tools-repo.js';

/** How long an MCP server's tool list is used again before the server is asked anew. */
export const TOOL_LIST_TTL_MS = 60_000;

/**
 * Each MCP server's `tools/list`, kept for a minute so that an event's attempts and the events
 * after it do not list the server's tools again each time. Kept per saved version of the tool
 * (its `updated_at`): a tool saved with another URL or allowlist is listed afresh at once.
 */
export class ToolListCache {
  private readonly lists = new Map<
    string,
    { version: number; until: number; tools: ServerTool[] }
  >();

  constructor(private readonly now: () => number = Date.now) {}

  async get(tool: ToolRow, list: () => Promise<ServerTool[]>): Promise<ServerTool[]> {
    const version = tool.updated_at.getTime();
    const kept = this.lists.get(tool.id);
    if (kept && kept.version === version && kept.until > this.now()) return kept.tools;
    const tools = await list();
    this.forgetExpired();
    this.lists.set(tool.id, { version, until: this.now() + TOOL_LIST_TTL_MS, tools });
    return tools;
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [id, kept] of this.lists) if (kept.until <= now) this.lists.delete(id);
  }
}

import type { ToolRow } from './tools-repo.js';
import type { ToolKind } from './tool-schemas.js';

/** What a server's `tools/list` holds, and whether the tool's `allowed_tools` names each. */
export interface ListedTool {
  name: string;
  description: string;
  allowed: boolean;
}

/** The answer of `POST /tools/{id}/test`, before the tool's secrets are cut out of its texts. */
export type ToolTest =
  | { ok: true; http_status: number; latency_ms: number; result: string }
  | { ok: true; tools: ListedTool[] }
  | { ok: false; http_status?: number; error: string };

/**
 * One kind of tool as the service reaches it (`http`, `mcp`): each kind's runner speaks its own
 * protocol through the outbound guards, bounded by the tool's `timeout_ms`, and leaves no
 * connection open once it has answered.
 */
export interface ToolRunner {
  /** One real exchange with the tool, for its test: `input` is already valid for the tool. */
  test(tool: ToolRow, input: Record<string, unknown>): Promise<ToolTest>;
}

export type ToolRunners = Record<ToolKind, ToolRunner>;

/** What one call of a tool by the model gave: its result as the model is given it. */
export interface ToolOutcome {
  /** `error`: the tool failed, timed out or could not be reached. */
  status: 'ok' | 'error';
  httpStatus: number | null;
  /** The result text (cut at MAX_RESULT_CHARS), or the error. */
  text: string;
  latencyMs: number;
}

/** A result as the model is given it: its first 16,384 characters, then `[cut]`. */
export const MAX_RESULT_CHARS = 16_384;

export function resultText(text: string, longer = false): string {
  return longer || text.length > MAX_RESULT_CHARS
    ? `${text.slice(0, MAX_RESULT_CHARS)}[cut]`
    : text;
}

import type { TokenUsage } from './ai-provider.js';
import { REPLY_TOOL } from './anthropic-request.js';
import type { ModelToolCall } from './tool-protocol.js';

interface ContentBlock {
  type?: unknown;
  id?: unknown;
  text?: unknown;
  name?: unknown;
  input?: unknown;
}

/**
 * The reply and usage of a Messages API answer (or the tools it asked for), or what it lacked
 * (and the usage it reported).
 */
export type AnthropicAnswer =
  | { text: string; usage: TokenUsage | null; toolCalls?: ModelToolCall[] }
  | { missing: string; usage: TokenUsage | null };

/** How the request offered tools: not at all, callable (`auto`), or switched off (`none`). */
export type OfferedTools = 'no tools' | 'auto' | 'none';

/**
 * Reads an answer: a structured reply is the input of the first `reply` tool call, as JSON
 * text; a text reply is the answer's text blocks, joined. While tools may be called, an answer
 * calling others (and not `reply`) asks for them. Once they are switched off, a structured reply
 * may also come as text (the `reply` tool cannot be called then).
 */
export function anthropicAnswer(
  text: string,
  structured: boolean,
  tools: OfferedTools = 'no tools',
): AnthropicAnswer {
  let parsed: { content?: unknown; usage?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    return { missing: 'a message in it', usage: null };
  }
  const usage = anthropicUsage(parsed?.usage);
  const content = parsed?.content;
  if (!Array.isArray(content)) return { missing: 'a message in it', usage };
  const blocks = content as ContentBlock[];
  const texts = blocks.filter((block) => block?.type === 'text' && typeof block.text === 'string');
  const joined = texts.map((block) => block.text as string).join('');
  const replyCall = blocks.find((block) => block?.type === 'tool_use' && block.name === REPLY_TOOL);
  if (tools === 'auto' && !(structured && replyCall)) {
    const toolCalls = toolCallsOf(blocks);
    if (toolCalls.length) return { text: joined, usage, toolCalls };
  }
  if (structured && tools === 'none' && !replyCall && texts.length) return { text: joined, usage };
  if (structured) {
    const call = blocks.find((block) => block?.type === 'tool_use' && block.name === REPLY_TOOL);
    if (call === undefined || call.input === undefined)
      return { missing: 'the reply tool call', usage };
    return { text: JSON.stringify(call.input), usage };
  }
  if (texts.length === 0) return { missing: 'a text reply in it', usage };
  return { text: joined, usage };
}

/** The `tool_use` blocks other than `reply`, their input as JSON text. */
function toolCallsOf(blocks: readonly ContentBlock[]): ModelToolCall[] {
  return blocks.flatMap((block) =>
    block?.type === 'tool_use' &&
    typeof block.id === 'string' &&
    typeof block.name === 'string' &&
    block.name !== REPLY_TOOL
      ? [{ id: block.id, name: block.name, argumentsText: JSON.stringify(block.input ?? {}) }]
      : [],
  );
}

/**
 * Anthropic counts cached input apart from the rest; a prompt's tokens are all three. Null when
 * the answer reported neither input nor output.
 */
export function anthropicUsage(usage: unknown): TokenUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const counts = usage as Record<string, unknown>;
  const count = (value: unknown) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
  const input = count(counts.input_tokens);
  const output = count(counts.output_tokens);
  if (input === null && output === null) return null;
  const cacheRead = count(counts.cache_read_input_tokens) ?? 0;
  const cacheWrite = count(counts.cache_creation_input_tokens) ?? 0;
  const prompt = input === null ? null : input + cacheWrite + cacheRead;
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt === null || output === null ? null : prompt + output,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
  };
}

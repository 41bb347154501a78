import { asksForJson } from './ai-settings.js';
import type { AiRequest } from './ai-provider.js';
import type { ResponseFormat } from './ai-settings.js';

/** Anthropic's API wants `max_tokens` on every call; this is sent when the channel sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 1024;

/** The tool a structured reply is asked through: the model must call it, its input is the reply. */
export const REPLY_TOOL = 'reply';

/** A text block marked as the end of a cached prefix: what comes before it is cached with it. */
interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: { type: 'ephemeral'; ttl?: '1h' };
}

type Message = { role: 'user' | 'assistant'; content: string | TextBlock[] };

/**
 * The Messages API body of one call: the system prompt (when there is one) beside the messages,
 * the thread's earlier exchanges as user/assistant pairs, oldest first, then the prompt. A
 * channel asking for JSON gets a forced call of the `reply` tool, whose input schema is the
 * channel's: the API's way of holding a reply to a shape.
 */
export function messagesBody(request: AiRequest, model: string): Record<string, unknown> {
  const messages: Message[] = [];
  for (const turn of request.history) {
    messages.push({ role: 'user', content: turn.prompt });
    messages.push({ role: 'assistant', content: turn.reply });
  }
  messages.push({ role: 'user', content: request.prompt });
  const body: Record<string, unknown> = {
    model,
    max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
  };
  const cache = cacheControl(request);
  if (request.system) {
    body.system = cache
      ? [{ type: 'text', text: request.system, cache_control: cache }]
      : request.system;
  }
  // The history is the same on the thread's next event: the last turn closes the cached prefix.
  const lastTurn = messages.length > 1 ? messages[messages.length - 2] : undefined;
  if (cache && lastTurn) {
    lastTurn.content = [{ type: 'text', text: lastTurn.content as string, cache_control: cache }];
  }
  body.messages = messages;
  // Anthropic's temperatures run from 0 to 1; a channel may set up to 2 for other providers.
  if (request.temperature !== undefined) body.temperature = Math.min(request.temperature, 1);
  const format = request.responseFormat;
  if (asksForJson(format)) {
    body.tools = [replyTool(format)];
    body.tool_choice = { type: 'tool', name: REPLY_TOOL };
  }
  return body;
}

/** Anthropic's `cache_control` for the channel's prompt caching; undefined when it is off. */
function cacheControl(request: AiRequest): TextBlock['cache_control'] {
  if (!request.promptCache || request.promptCache === 'off') return undefined;
  return request.promptCache === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

function replyTool(format: Exclude<ResponseFormat, 'text'>): Record<string, unknown> {
  if (format === 'json') {
    return {
      name: REPLY_TOOL,
      description: 'Give your whole reply as this tool’s input: one JSON object.',
      input_schema: { type: 'object' },
    };
  }
  const schema = format.json_schema;
  return {
    name: REPLY_TOOL,
    description: 'Give your whole reply as this tool’s input, valid against its input schema.',
    // A boolean schema is not a tool schema; `true` allows any object, and `false` fails the check anyway.
    input_schema: typeof schema === 'object' ? schema : { type: 'object' },
  };
}

import { asksForJson } from './ai-settings.js';
import type { AiRequest } from './ai-provider.js';
import type { ResponseFormat } from './ai-settings.js';
import type { ToolOffer } from './tool-protocol.js';

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

type Message = {
  role: 'user' | 'assistant';
  content: string | TextBlock[] | Record<string, unknown>[];
};

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
  const lastTurn = messages.at(-1);
  messages.push({ role: 'user', content: promptContent(request) });
  if (request.toolUse) messages.push(...toolRoundMessages(request.toolUse));
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
  // The history is the same on the thread's next event: its last turn closes the cached prefix.
  if (cache && lastTurn) {
    lastTurn.content = [{ type: 'text', text: lastTurn.content as string, cache_control: cache }];
  }
  body.messages = messages;
  // Anthropic's temperatures run from 0 to 1; a channel may set up to 2 for other providers.
  if (request.temperature !== undefined) body.temperature = Math.min(request.temperature, 1);
  const format = request.responseFormat;
  if (request.toolUse) {
    const { tools, choice } = request.toolUse;
    const offered = tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }));
    // A structured reply comes as a call of the `reply` tool, offered beside the others: the
    // model must call one of them until the tools are switched off.
    body.tools = asksForJson(format) ? [...offered, replyTool(format)] : offered;
    if (choice === 'none') body.tool_choice = { type: 'none' };
    else body.tool_choice = asksForJson(format) ? { type: 'any' } : { type: 'auto' };
  } else if (asksForJson(format)) {
    body.tools = [replyTool(format)];
    body.tool_choice = { type: 'tool', name: REPLY_TOOL };
  }
  return body;
}

/** The prompt as text, or, with images, each image as a base64 block followed by its text. */
function promptContent(request: AiRequest): Message['content'] {
  if (!request.images?.length) return request.prompt;
  return [
    ...request.images.map((image) => ({
      type: 'image',
      source: { type: 'base64', media_type: image.media_type, data: image.data },
    })),
    { type: 'text', text: request.prompt },
  ];
}

/** Anthropic's `cache_control` for the channel's prompt caching; undefined when it is off. */
function cacheControl(request: AiRequest): TextBlock['cache_control'] {
  if (!request.promptCache || request.promptCache === 'off') return undefined;
  return request.promptCache === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

/** Each round: the assistant's content with its `tool_use` blocks, then one user message of results. */
function toolRoundMessages(toolUse: ToolOffer): Message[] {
  const messages: Message[] = [];
  for (const round of toolUse.rounds) {
    const content: Record<string, unknown>[] = [];
    if (round.text) content.push({ type: 'text', text: round.text });
    for (const call of round.calls) {
      content.push({
        type: 'tool_use',
        id: call.id,
        name: call.name,
        input: inputOf(call.argumentsText),
      });
    }
    messages.push({ role: 'assistant', content });
    messages.push({
      role: 'user',
      content: round.results.map((result) => ({
        type: 'tool_result',
        tool_use_id: result.id,
        content: result.content,
        ...(result.isError ? { is_error: true } : {}),
      })),
    });
  }
  return messages;
}

/** A call's input as the model sent it (its text is JSON.stringify of what it sent). */
function inputOf(argumentsText: string): unknown {
  try {
    return JSON.parse(argumentsText) as unknown;
  } catch {
    return {};
  }
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

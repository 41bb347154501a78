import type { AiRequest } from './ai-provider.js';
import type { ResponseFormat } from './ai-settings.js';
import type { ToolOffer } from './tool-protocol.js';

/** A part of a user message that carries images: the prompt's text, or one image. */
type ContentPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAiToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * The chat-completions body of one call: the system message (when there is one), the thread's
 * earlier exchanges as user/assistant pairs, oldest first, then the prompt; the model, and the
 * sampling settings the channel set (the others are left to the server's defaults).
 */
export function chatCompletionBody(request: AiRequest, model: string): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (request.system) messages.push({ role: 'system', content: request.system });
  for (const turn of request.history) {
    messages.push({ role: 'user', content: turn.prompt });
    messages.push({ role: 'assistant', content: turn.reply });
  }
  messages.push({ role: 'user', content: promptContent(request) });
  if (request.toolUse) messages.push(...toolRoundMessages(request.toolUse));
  const body: Record<string, unknown> = { model, messages };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.responseFormat !== undefined) {
    body.response_format = openAiResponseFormat(request.responseFormat);
  }
  // Requests sharing a key are routed to the same cache: one key per channel.
  if (request.promptCache && request.promptCache !== 'off' && request.cacheKey) {
    body.prompt_cache_key = request.cacheKey;
  }
  if (request.toolUse) {
    // Listed on every call, the one that switches them off too: the rounds refer to them.
    body.tools = request.toolUse.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    body.tool_choice = request.toolUse.choice;
  }
  return body;
}

/** The prompt as text, or, with images, its text followed by each image as a data URL. */
function promptContent(request: AiRequest): string | ContentPart[] {
  if (!request.images?.length) return request.prompt;
  return [
    { type: 'text', text: request.prompt },
    ...request.images.map((image) => ({
      type: 'image_url' as const,
      image_url: { url: `data:${image.media_type};base64,${image.data}` },
    })),
  ];
}

/** Each round: the assistant message with its calls, then one `tool` message per call. */
function toolRoundMessages(toolUse: ToolOffer): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const round of toolUse.rounds) {
    messages.push({
      role: 'assistant',
      content: round.text,
      tool_calls: round.calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.argumentsText },
      })),
    });
    for (const result of round.results) {
      messages.push({ role: 'tool', tool_call_id: result.id, content: result.content });
    }
  }
  return messages;
}

/** OpenAI's `response_format` for a channel's setting. */
export function openAiResponseFormat(format: ResponseFormat): Record<string, unknown> {
  if (format === 'text') return { type: 'text' };
  if (format === 'json') return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: 'reply', schema: format.json_schema } };
}

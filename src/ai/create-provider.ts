import type { Config } from '../platform/config.js';
import type { AiProvider } from './ai-provider.js';
import { AnthropicProvider } from './anthropic-provider.js';
import { createEchoProvider } from './echo-provider.js';
import { OpenAiProvider } from './openai-provider.js';

/** One provider per process: its back-pressure pause is shared by every call it makes. */
export function createAiProvider(ai: Config['ai']): AiProvider {
  if (ai.provider === 'echo') return createEchoProvider(ai.model);
  // The config schema requires the model for both, the base URL for `openai`.
  const options = {
    model: ai.model as string,
    apiKey: ai.apiKey,
    timeoutMs: ai.timeoutMs,
  };
  if (ai.provider === 'anthropic')
    return new AnthropicProvider({ ...options, baseUrl: ai.baseUrl });
  return new OpenAiProvider({ ...options, baseUrl: ai.baseUrl as string });
}

import type { Config } from '../platform/config.js';
import type { AiProvider } from './ai-provider.js';
import { createEchoProvider } from './echo-provider.js';
import { OpenAiProvider } from './openai-provider.js';

/** One provider per process: its back-pressure pause is shared by every call it makes. */
export function createAiProvider(ai: Config['ai']): AiProvider {
  if (ai.provider === 'echo') return createEchoProvider(ai.model);
  // The config schema requires both for `openai`.
  return new OpenAiProvider({
    baseUrl: ai.baseUrl as string,
    model: ai.model as string,
    apiKey: ai.apiKey,
    timeoutMs: ai.timeoutMs,
  });
}

import type { Config } from '../config.js';
import type { AiProvider } from './ai-provider.js';
import { echoProvider } from './echo-provider.js';
import { OpenAiProvider } from './openai-provider.js';

export function createAiProvider(ai: Config['ai']): AiProvider {
  if (ai.provider === 'echo') return echoProvider;
  // The config schema requires both for `openai`.
  return new OpenAiProvider({
    baseUrl: ai.baseUrl as string,
    model: ai.model as string,
    apiKey: ai.apiKey,
    timeoutMs: ai.timeoutMs,
  });
}

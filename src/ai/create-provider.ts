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

/** A provider a workspace added (see src/providers/): its kind, server and key. */
export interface ProviderSettings {
  kind: 'openai' | 'anthropic' | 'echo';
  /** The kind's usual server when null. */
  baseUrl: string;
  apiKey: string | null;
  timeoutMs: number;
  /** PROVIDERS_ALLOW_PRIVATE: whether loopback and private addresses may be reached. */
  allowPrivate: boolean;
}

/**
 * The AI provider of a workspace's provider settings. Its calls always name a model (the
 * channel's, a fallback's, or AI_MODEL): the model given here is only a last resort.
 */
export function createProviderOf(settings: ProviderSettings, model: string): AiProvider {
  if (settings.kind === 'echo') return createEchoProvider(undefined);
  const options = {
    baseUrl: settings.baseUrl,
    model,
    apiKey: settings.apiKey ?? undefined,
    timeoutMs: settings.timeoutMs,
    allowPrivate: settings.allowPrivate,
  };
  if (settings.kind === 'anthropic') return new AnthropicProvider(options);
  return new OpenAiProvider(options);
}

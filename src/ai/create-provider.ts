import type { Config } from '../platform/config.js';
import { AiError, type AiProvider } from './ai-provider.js';
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
  if (settings.kind === 'anthropic') return unavailable('anthropic');
  return new OpenAiProvider({
    baseUrl: settings.baseUrl,
    model,
    apiKey: settings.apiKey ?? undefined,
    timeoutMs: settings.timeoutMs,
    allowPrivate: settings.allowPrivate,
  });
}

function unavailable(kind: string): AiProvider {
  return {
    name: kind,
    deterministic: false,
    complete: () =>
      Promise.reject(new AiError(`Providers of kind "${kind}" cannot be called yet.`, false)),
  };
}

/** The kinds of AI provider a workspace may add. */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'echo'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The server a kind talks to when the provider names none (the echo has none). */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderKind, string | null>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  echo: null,
};

export { DEFAULT_PROVIDER } from '../ai/ai-settings.js';

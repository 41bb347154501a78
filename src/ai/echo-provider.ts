import type { AiProvider } from './ai-provider.js';

/** Long prompts are cut in the echo so a stand-in reply never doubles a large event's size. */
const ECHO_LIMIT = 2000;

/**
 * The offline default: no model, no network. Its reply says so in its first words, so nobody
 * mistakes it for a model's answer, and repeats the prompt so the whole path can be seen working.
 */
export const echoProvider: AiProvider = {
  name: 'echo',
  async complete(prompt) {
    const shown = prompt.length > ECHO_LIMIT ? `${prompt.slice(0, ECHO_LIMIT)}…` : prompt;
    return `[echo stand-in — no AI model configured] You wrote: ${shown}`;
  },
};

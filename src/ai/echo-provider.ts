import type { AiProvider, AiRequest } from './ai-provider.js';

/** Long prompts are cut in the echo so a stand-in reply never doubles a large event's size. */
const ECHO_LIMIT = 2000;

/**
 * The offline default: no model, no network. Its reply says so in its first words, so nobody
 * mistakes it for a model's answer, and reports what a real call would have carried (model,
 * system prompt, how many earlier exchanges of the thread, the prompt), so the whole path can be
 * seen working. A channel asking for JSON gets the same report as a JSON object.
 */
export function createEchoProvider(defaultModel: string | undefined): AiProvider {
  return {
    name: 'echo',
    deterministic: true,
    async complete(request) {
      const model = request.model ?? defaultModel ?? null;
      return { text: echoText(request, model), model, usage: null, latencyMs: 0 };
    },
  };
}

/** The echo without an AI_MODEL: what tests and a fresh install use. */
export const echoProvider = createEchoProvider(undefined);

function echoText(request: AiRequest, model: string | null): string {
  const prompt = cut(request.prompt);
  const system = request.system ? cut(request.system) : null;
  const history = request.history.length;
  if (request.responseFormat !== undefined && request.responseFormat !== 'text') {
    return JSON.stringify({
      echo: 'no AI model configured',
      model,
      system_prompt: system,
      history,
      prompt,
    });
  }
  const sent = [
    model === null ? undefined : `model ${model}`,
    system === null ? undefined : `system prompt “${system}”`,
    history > 0
      ? `${history} earlier ${history === 1 ? 'exchange' : 'exchanges'} of the thread`
      : undefined,
  ].filter((part) => part !== undefined);
  const report = sent.length ? ` Would have sent ${sent.join('; ')}.` : '';
  return `[echo stand-in — no AI model configured]${report} You wrote: ${prompt}`;
}

function cut(text: string): string {
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text;
}

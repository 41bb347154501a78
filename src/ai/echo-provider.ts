import { asksForJson } from './ai-settings.js';
import { AiError, type AiProvider, type AiRequest } from './ai-provider.js';
import { replySchemas } from '../reply-schema/checker-pool.js';

/** Long prompts are cut in the echo so a stand-in reply never doubles a large event's size. */
const ECHO_LIMIT = 2000;

/**
 * The offline default: no model, no network. Its reply says so in its first words, so nobody
 * mistakes it for a model's answer, and reports what a real call would have carried (model,
 * system prompt, how many earlier exchanges of the thread, the prompt), so the whole path can be
 * seen working. A channel asking for JSON gets the same report as a JSON object; one asking for
 * a JSON Schema gets a sample valid against it, made from the prompt (the same prompt, the same
 * sample), so what follows the reply (checks, destinations, `json.` conditions) can be tried too.
 */
export function createEchoProvider(defaultModel: string | undefined): AiProvider {
  return {
    name: 'echo',
    deterministic: true,
    async complete(request) {
      const model = request.model ?? defaultModel ?? null;
      const format = request.responseFormat;
      const text =
        typeof format === 'object'
          ? await sampleFor(format.json_schema, request.prompt)
          : echoText(request, model);
      return { text, model, usage: null, latencyMs: 0 };
    },
  };
}

/** The echo without an AI_MODEL: what tests and a fresh install use. */
export const echoProvider = createEchoProvider(undefined);

function echoText(request: AiRequest, model: string | null): string {
  const prompt = cut(request.prompt);
  const system = request.system ? cut(request.system) : null;
  const history = request.history.length;
  const images = (request.images ?? []).map(
    (image) => `${image.media_type}, ${Buffer.byteLength(image.data, 'base64')} bytes`,
  );
  if (asksForJson(request.responseFormat)) {
    return JSON.stringify({
      echo: 'no AI model configured',
      model,
      system_prompt: system,
      history,
      ...(images.length ? { images } : {}),
      prompt,
    });
  }
  const sent = [
    model === null ? undefined : `model ${model}`,
    system === null ? undefined : `system prompt “${system}”`,
    history > 0
      ? `${history} earlier ${history === 1 ? 'exchange' : 'exchanges'} of the thread`
      : undefined,
    images.length
      ? `${images.length === 1 ? 'an image' : `${images.length} images`} (${images.join('; ')})`
      : undefined,
  ].filter((part) => part !== undefined);
  const report = sent.length ? ` Would have sent ${sent.join('; ')}.` : '';
  return `[echo stand-in — no AI model configured]${report} You wrote: ${prompt}`;
}

/** A sample reply for the schema, made in a schema checker (a schema can make it slow to make). */
async function sampleFor(
  schema: Record<string, unknown> | boolean,
  prompt: string,
): Promise<string> {
  const made = await replySchemas.sample(JSON.stringify(schema), seedOf(prompt));
  if ('sample' in made) return made.sample;
  throw new AiError(
    `The echo stand-in could not answer in the channel's JSON Schema: ${made.problem}.`,
    false,
  );
}

/** FNV-1a of the prompt: a seed that stays the same for the same prompt, across processes. */
function seedOf(prompt: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < prompt.length; i++) {
    hash ^= prompt.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function cut(text: string): string {
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text;
}

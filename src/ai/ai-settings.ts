import { z } from 'zod';
import {
  DEFAULT_GUARD_SETTINGS,
  GUARD_SETTING_NAMES,
  guardSettingsInputShape,
  type GuardSettings,
} from '../guardrails/guard-settings.js';
import { replySchemas } from './reply-schema-threads.js';
import { schemaLimitProblem } from './schema-limits.js';

/** How a reply must be shaped: free text, any JSON object, or JSON valid against a schema. */
export type ResponseFormat = 'text' | 'json' | { json_schema: Record<string, unknown> | boolean };

/**
 * A channel's AI settings as stored and shown: every member null means "the server's default"
 * (AI_MODEL, no system message, the provider's own temperature and limits, text, no threads).
 */
export interface AiSettings extends GuardSettings {
  model: string | null;
  system_prompt: string | null;
  temperature: number | null;
  max_tokens: number | null;
  response_format: ResponseFormat | null;
  thread_key: string | null;
  history: number | null;
}

export const AI_SETTING_NAMES = [
  'model',
  'system_prompt',
  'temperature',
  'max_tokens',
  'response_format',
  'thread_key',
  'history',
  ...GUARD_SETTING_NAMES,
] as const satisfies readonly (keyof AiSettings)[];

export const DEFAULT_AI_SETTINGS: AiSettings = Object.freeze({
  model: null,
  system_prompt: null,
  temperature: null,
  max_tokens: null,
  response_format: null,
  thread_key: null,
  history: null,
  ...DEFAULT_GUARD_SETTINGS,
});

// Compiled on a schema thread, so the parse is asynchronous: parse bodies with an `ai` member
// with parseAsync / safeParseAsync.
const jsonSchema = z
  .union([z.record(z.string(), z.unknown()), z.boolean()])
  .superRefine(async (schema, ctx) => {
    const tooLarge = schemaLimitProblem(schema);
    if (tooLarge) return ctx.addIssue({ code: 'custom', message: tooLarge });
    const problem = await replySchemas.compile(JSON.stringify(schema));
    if (problem) {
      ctx.addIssue({ code: 'custom', message: `is not a usable JSON Schema: ${problem}` });
    }
  });

const responseFormat = z.union([
  z.enum(['text', 'json']),
  z.strictObject({ json_schema: jsonSchema }),
]);

/**
 * The `ai` member of a channel create or PATCH body. Each member may be left out or set to
 * null (back to the server's default); in a PATCH, members left out keep their value.
 */
export const aiSettingsInputSchema = z.strictObject({
  model: z.string().trim().min(1, 'must not be empty').max(200).nullish(),
  system_prompt: z.string().max(100_000).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  max_tokens: z.number().int().min(1).max(100_000).nullish(),
  response_format: responseFormat.nullish(),
  thread_key: z.string().max(1_000).nullish(),
  history: z.number().int().min(0).max(50).nullish(),
  ...guardSettingsInputShape,
});

export type AiSettingsInput = z.infer<typeof aiSettingsInputSchema>;

/** The settings after a change: members given replace (null clears), members left out stay. */
export function mergeAiSettings(
  current: AiSettings,
  input: AiSettingsInput | null | undefined,
): AiSettings {
  if (input === null) return { ...DEFAULT_AI_SETTINGS };
  if (input === undefined) return current;
  const next: AiSettings = { ...current };
  for (const name of AI_SETTING_NAMES) {
    const value = input[name];
    if (value !== undefined) (next as unknown as Record<string, unknown>)[name] = value;
  }
  // An empty system prompt or thread key means none: stored as the default.
  if (next.system_prompt === '') next.system_prompt = null;
  if (next.thread_key?.trim() === '') next.thread_key = null;
  if (next.redact?.length === 0) next.redact = null;
  return next;
}

/** Reads the stored JSON (members missing from older rows are defaults). */
export function toAiSettings(stored: unknown): AiSettings {
  const settings = { ...DEFAULT_AI_SETTINGS };
  if (stored && typeof stored === 'object') {
    for (const name of AI_SETTING_NAMES) {
      const value = (stored as Record<string, unknown>)[name];
      if (value !== undefined) (settings as unknown as Record<string, unknown>)[name] = value;
    }
  }
  return settings;
}

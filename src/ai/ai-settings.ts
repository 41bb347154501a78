import { z } from 'zod';
import {
  DEFAULT_GUARD_SETTINGS,
  GUARD_SETTING_NAMES,
  guardSettingsInputShape,
  type GuardSettings,
} from '../guardrails/guard-settings.js';
import { replySchemas } from '../reply-schema/checker-pool.js';
import { schemaLimitProblem } from '../reply-schema/schema-limits.js';
import { parseConditionPath } from '../conditions/condition-paths.js';

/** How a reply must be shaped: free text, any JSON object, or JSON valid against a schema. */
export type ResponseFormat = 'text' | 'json' | { json_schema: Record<string, unknown> | boolean };

/** Whether a reply must be JSON (`json` or a schema) rather than free text. */
export function asksForJson(
  format: ResponseFormat | null | undefined,
): format is Exclude<ResponseFormat, 'text'> {
  return format != null && format !== 'text';
}

/** A provider asked when the one before it fails in a passing way; `model` null: the channel's. */
export interface AiFallback {
  provider: string;
  model: string | null;
}

/** The built-in provider of every workspace: the server's AI_* configuration. */
export const DEFAULT_PROVIDER = 'default';

/** How a provider is named: in its workspace, and in channels' `provider` and `fallbacks`. */
export const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** How a tool is named: in its workspace, and in channels' `tools`. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,48}$/;

/** Tools one channel may offer its model. */
export const MAX_CHANNEL_TOOLS = 16;

/** Rounds of tool calls a reply may take when a channel does not say. */
export const DEFAULT_MAX_TOOL_ROUNDS = 4;

/** How long a provider keeps a channel's prompt prefix cached; `off` asks it not to. */
export const PROMPT_CACHES = ['off', '5m', '1h'] as const;
export type PromptCache = (typeof PROMPT_CACHES)[number];

/** Payload paths a channel may name images at (`ai.images`); also the images one event sends. */
export const MAX_IMAGES = 4;

/** Providers a channel may fall back to, after its own. */
export const MAX_FALLBACKS = 3;

/** The longest a channel's reply cache keeps a reply: 30 days, in seconds. */
export const MAX_REPLY_CACHE_S = 2_592_000;

/**
 * A channel's AI settings as stored and shown: every member null means "the server's default"
 * (AI_MODEL, no system message, the provider's own temperature and limits, text, no threads);
 * `provider` names one of the workspace's providers (`default` unless set), and `fallbacks` the
 * ones asked in turn when it fails.
 */
export interface AiSettings extends GuardSettings {
  provider: string;
  fallbacks: AiFallback[];
  model: string | null;
  system_prompt: string | null;
  temperature: number | null;
  max_tokens: number | null;
  response_format: ResponseFormat | null;
  thread_key: string | null;
  history: number | null;
  /** Names of the workspace's tools the channel's model is offered. */
  tools: string[];
  max_tool_rounds: number;
  prompt_cache: PromptCache;
  /** `payload.<path>`s whose URLs are images sent with the prompt (src/attachments/). */
  images: string[];
  /** Seconds a reply may be given again to an identical request without a call; 0: off. */
  reply_cache_s: number;
}

export const AI_SETTING_NAMES = [
  'provider',
  'fallbacks',
  'model',
  'system_prompt',
  'temperature',
  'max_tokens',
  'response_format',
  'thread_key',
  'history',
  'tools',
  'max_tool_rounds',
  'prompt_cache',
  'images',
  'reply_cache_s',
  ...GUARD_SETTING_NAMES,
] as const satisfies readonly (keyof AiSettings)[];

export const DEFAULT_AI_SETTINGS: AiSettings = Object.freeze({
  provider: DEFAULT_PROVIDER,
  fallbacks: Object.freeze([]) as unknown as AiFallback[],
  model: null,
  system_prompt: null,
  temperature: null,
  max_tokens: null,
  response_format: null,
  thread_key: null,
  history: null,
  tools: Object.freeze([]) as unknown as string[],
  max_tool_rounds: DEFAULT_MAX_TOOL_ROUNDS,
  prompt_cache: '5m',
  images: Object.freeze([]) as unknown as string[],
  reply_cache_s: 0,
  ...DEFAULT_GUARD_SETTINGS,
});

// Compiled in a schema checker off the event loop, so the parse is asynchronous: parse bodies with an `ai` member
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
const model = z.string().trim().min(1, 'must not be empty').max(200);
const providerName = z
  .string()
  .regex(PROVIDER_NAME, 'must be a provider name: 1 to 64 letters, digits, "-" or "_"');

export const aiSettingsInputSchema = z.strictObject({
  provider: providerName.nullish(),
  fallbacks: z
    .array(z.strictObject({ provider: providerName, model: model.nullish() }))
    .max(MAX_FALLBACKS, `must list at most ${MAX_FALLBACKS} providers`)
    .nullish(),
  model: model.nullish(),
  system_prompt: z.string().max(100_000).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  max_tokens: z.number().int().min(1).max(100_000).nullish(),
  response_format: responseFormat.nullish(),
  thread_key: z.string().max(1_000).nullish(),
  history: z.number().int().min(0).max(50).nullish(),
  tools: z
    .array(z.string().regex(TOOL_NAME, 'must be a tool name: 1 to 48 letters, digits, "-" or "_"'))
    .max(MAX_CHANNEL_TOOLS, `must list at most ${MAX_CHANNEL_TOOLS} tools`)
    .refine((names) => new Set(names).size === names.length, 'must name each tool once')
    .nullish(),
  max_tool_rounds: z.number().int().min(1).max(10).nullish(),
  prompt_cache: z.enum(PROMPT_CACHES).nullish(),
  images: z
    .array(z.string().trim().superRefine(payloadPathProblem))
    .max(MAX_IMAGES, `must list at most ${MAX_IMAGES} paths`)
    .nullish(),
  reply_cache_s: z.number().int().min(0).max(MAX_REPLY_CACHE_S).nullish(),
  ...guardSettingsInputShape,
});

/** An image path names a field of the payload, as `accept_when` does: `payload.<path>`. */
function payloadPathProblem(path: string, ctx: z.RefinementCtx): void {
  const parsed = parseConditionPath(path, ['payload']);
  if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
}

export type AiSettingsInput = z.infer<typeof aiSettingsInputSchema>;

/** The settings after a change: members given replace (null clears), members left out stay. */
export function mergeAiSettings(
  current: AiSettings,
  input: AiSettingsInput | null | undefined,
): AiSettings {
  if (input === null) return { ...DEFAULT_AI_SETTINGS, fallbacks: [], tools: [], images: [] };
  if (input === undefined) return current;
  const next: AiSettings = { ...current };
  for (const name of AI_SETTING_NAMES) {
    const value = input[name];
    if (value !== undefined) (next as unknown as Record<string, unknown>)[name] = value;
  }
  if (input.provider === null) next.provider = DEFAULT_PROVIDER;
  if (input.tools === null) next.tools = [];
  if (input.images === null) next.images = [];
  if (input.max_tool_rounds === null) next.max_tool_rounds = DEFAULT_MAX_TOOL_ROUNDS;
  if (input.prompt_cache === null) next.prompt_cache = DEFAULT_AI_SETTINGS.prompt_cache;
  if (input.reply_cache_s === null) next.reply_cache_s = DEFAULT_AI_SETTINGS.reply_cache_s;
  if (input.fallbacks === null) next.fallbacks = [];
  else if (input.fallbacks !== undefined) {
    next.fallbacks = input.fallbacks.map((f) => ({ provider: f.provider, model: f.model ?? null }));
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
      if (value !== undefined && value !== null) {
        (settings as unknown as Record<string, unknown>)[name] = value;
      }
    }
  }
  return settings;
}

/** The providers a channel's settings name, its own first, each once. */
export function namedProviders(settings: AiSettings): string[] {
  return [...new Set([settings.provider, ...settings.fallbacks.map((f) => f.provider)])];
}

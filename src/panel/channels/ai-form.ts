import {
  aiSettingsInputSchema,
  MAX_FALLBACKS,
  type AiSettings,
  type AiSettingsInput,
} from '../../ai/ai-settings.js';
import { REDACTION_KINDS } from '../../guardrails/redaction-kinds.js';
import type { FieldErrors } from '../forms.js';
import { textareaText } from '../forms.js';

/** The channel editor's AI section as its fields hold it: every value is the text of a field. */
export interface AiForm {
  /** A provider's name. */
  provider: string;
  /** Up to MAX_FALLBACKS providers (empty: none) and their models (empty: the channel's). */
  fallback_provider_1: string;
  fallback_model_1: string;
  fallback_provider_2: string;
  fallback_model_2: string;
  fallback_provider_3: string;
  fallback_model_3: string;
  model: string;
  system_prompt: string;
  temperature: string;
  max_tokens: string;
  /** '' (the server's default), `text`, `json` or `json_schema`. */
  response_format: string;
  json_schema: string;
  thread_key: string;
  history: string;
  /** `off`, `5m` or `1h`. */
  prompt_cache: string;
  /** Up to MAX_IMAGES `payload.<path>`s of images (empty: none). */
  image_1: string;
  image_2: string;
  image_3: string;
  image_4: string;
  /** Seconds; empty: off. */
  reply_cache_s: string;
  /** The kinds checked, comma-separated. */
  redact: string;
  /** `on` when checked. */
  restore: string;
  spotlight: string;
}

/** Sent with the guardrail checkboxes: an unchecked box is then off, not "unchanged". */
export const GUARD_FIELDS_SHOWN = 'ai_guard_shown';

const KIND_LABELS: Record<(typeof REDACTION_KINDS)[number], string> = {
  secret: 'API keys and private keys',
  email: 'E-mail addresses',
  card: 'Card numbers (Luhn)',
  iban: 'IBANs (mod-97)',
  ip: 'IP addresses',
  phone: 'Phone numbers',
};

/** Form field names are the settings' names with an `ai_` prefix. */
export const AI_FIELD = (name: keyof AiForm) => `ai_${name}`;

export function aiFormOf(settings: AiSettings): AiForm {
  const format = settings.response_format;
  const fallback = (n: number) => settings.fallbacks[n - 1];
  return {
    provider: settings.provider,
    fallback_provider_1: fallback(1)?.provider ?? '',
    fallback_model_1: fallback(1)?.model ?? '',
    fallback_provider_2: fallback(2)?.provider ?? '',
    fallback_model_2: fallback(2)?.model ?? '',
    fallback_provider_3: fallback(3)?.provider ?? '',
    fallback_model_3: fallback(3)?.model ?? '',
    model: settings.model ?? '',
    system_prompt: settings.system_prompt ?? '',
    temperature: settings.temperature === null ? '' : String(settings.temperature),
    max_tokens: settings.max_tokens === null ? '' : String(settings.max_tokens),
    response_format: format === null ? '' : typeof format === 'string' ? format : 'json_schema',
    json_schema:
      format !== null && typeof format === 'object'
        ? JSON.stringify(format.json_schema, null, 2)
        : '',
    thread_key: settings.thread_key ?? '',
    history: settings.history === null ? '' : String(settings.history),
    prompt_cache: settings.prompt_cache,
    image_1: settings.images[0] ?? '',
    image_2: settings.images[1] ?? '',
    image_3: settings.images[2] ?? '',
    image_4: settings.images[3] ?? '',
    reply_cache_s: settings.reply_cache_s === 0 ? '' : String(settings.reply_cache_s),
    redact: (settings.redact ?? []).join(','),
    restore: settings.restore ? 'on' : '',
    spotlight: settings.spotlight ? 'on' : '',
  };
}

/** The posted AI fields; a field the form did not send keeps the channel's current value. */
export function postedAiForm(body: Record<string, unknown>, current: AiForm): AiForm {
  const form = { ...current };
  for (const name of Object.keys(current) as (keyof AiForm)[]) {
    const value = body[AI_FIELD(name)];
    if (typeof value === 'string') form[name] = textareaText(value);
  }
  if (body[GUARD_FIELDS_SHOWN] !== undefined) {
    const redact = body[AI_FIELD('redact')];
    form.redact = (Array.isArray(redact) ? redact : redact === undefined ? [] : [redact]).join(',');
    form.restore = body[AI_FIELD('restore')] === undefined ? '' : 'on';
    form.spotlight = body[AI_FIELD('spotlight')] === undefined ? '' : 'on';
  }
  return form;
}

const NUMBER = /^-?\d+(\.\d+)?$/;

const IMAGE_FIELDS = ['image_1', 'image_2', 'image_3', 'image_4'] as const;

/** The field of the image path an error names (an error of the whole list: the first field's). */
function imageField(form: AiForm, index: unknown): keyof AiForm {
  const filled = IMAGE_FIELDS.filter((name) => form[name].trim());
  return typeof index === 'number' ? (filled[index] ?? 'image_1') : 'image_1';
}

/**
 * The `ai` change of a channel from the form, checked like the API checks it, or the errors to
 * show next to the fields. Empty fields mean the server's default.
 */
export async function parseAiForm(
  form: AiForm,
): Promise<{ input?: AiSettingsInput; errors: FieldErrors }> {
  const errors: FieldErrors = {};
  const number = (name: keyof AiForm): number | null | undefined => {
    const text = form[name].trim();
    if (text === '') return null;
    if (NUMBER.test(text)) return Number(text);
    errors[AI_FIELD(name)] = 'must be a number';
    return undefined;
  };
  let responseFormat: AiSettingsInput['response_format'] = null;
  if (form.response_format === 'text' || form.response_format === 'json') {
    responseFormat = form.response_format;
  } else if (form.response_format === 'json_schema') {
    try {
      responseFormat = { json_schema: JSON.parse(form.json_schema) as Record<string, unknown> };
    } catch (error) {
      errors[AI_FIELD('json_schema')] =
        `The schema is not JSON: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  const fallbacks = [];
  for (let n = 1; n <= MAX_FALLBACKS; n++) {
    const provider = form[`fallback_provider_${n}` as keyof AiForm].trim();
    const model = form[`fallback_model_${n}` as keyof AiForm].trim();
    if (provider) fallbacks.push({ provider, model: model || null });
  }
  const candidate = {
    provider: form.provider.trim() || null,
    fallbacks,
    model: form.model.trim() || null,
    system_prompt: form.system_prompt || null,
    temperature: number('temperature'),
    max_tokens: number('max_tokens'),
    response_format: responseFormat,
    thread_key: form.thread_key.trim() ? form.thread_key : null,
    history: number('history'),
    prompt_cache: form.prompt_cache || null,
    images: IMAGE_FIELDS.map((name) => form[name].trim()).filter(Boolean),
    reply_cache_s: number('reply_cache_s'),
    redact: form.redact ? form.redact.split(',').filter(Boolean) : null,
    restore: form.restore === 'on' ? true : null,
    spotlight: form.spotlight === 'on' ? true : null,
  };
  // The other fields are checked too, so that every error shows at once, not one per save.
  const parsed = await aiSettingsInputSchema.safeParseAsync(candidate);
  if (parsed.success)
    return Object.keys(errors).length ? { errors } : { input: parsed.data, errors };
  for (const issue of parsed.error.issues) {
    const [name, index, member] = issue.path;
    const field =
      name === 'response_format'
        ? 'json_schema'
        : name === 'images'
          ? imageField(form, index)
          : name === 'fallbacks'
            ? (`fallback_${member === 'model' ? 'model' : 'provider'}_${Number(index) + 1}` as keyof AiForm)
            : (String(name) as keyof AiForm);
    errors[AI_FIELD(field)] ??= issue.message;
  }
  return { errors };
}

/** The redaction kinds offered as checkboxes, in the order that wins where they overlap. */
export const REDACTION_CHOICES: readonly { kind: string; label: string }[] = REDACTION_KINDS.map(
  (kind) => ({ kind, label: KIND_LABELS[kind] }),
);

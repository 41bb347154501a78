import type { Condition } from '../../conditions/condition-schemas.js';
import { compileConditions } from '../../conditions/conditions.js';
import { EventGuard } from '../../guardrails/event-guard.js';
import type { RedactionKind } from '../../guardrails/redaction-kinds.js';
import { renderThreadKey } from '../../hooks/thread-key.js';
import {
  isJsonObject,
  parsePayload,
  renderTemplate,
  type JsonValue,
} from '../../template/index.js';
import type { AiForm } from './ai-form.js';
import { previewTemplate, type Preview } from './template-preview.js';

export interface AiPreview {
  /** The rendered system prompt; undefined when the channel has none. */
  system?: Preview;
  /** The sample's thread key: undefined without a thread_key template, null when it renders empty. */
  threadKey?: string | null;
  /** With guardrails on: the system message and prompt as they would be sent, and what was redacted. */
  guarded?: { system?: string; prompt: string; redactions: Record<string, number> | null };
  /** With accept_when set: the condition the sample does not meet, or null when it is accepted. */
  filteredBy?: string | null;
}

/**
 * The AI section's preview: the system prompt and thread key the sample would give, what the
 * guardrails would send (this preview's data tags are drawn for it alone), and whether the
 * channel's `accept_when` lets the sample through.
 */
export function previewAi(
  ai: AiForm,
  sample: string,
  template: string,
  acceptWhen: readonly Condition[] = [],
): AiPreview {
  const preview: AiPreview = {};
  if (ai.system_prompt.trim()) preview.system = previewTemplate(ai.system_prompt, sample);
  let payload: JsonValue;
  try {
    payload = parsePayload(sample);
  } catch {
    // the template preview already says what is wrong with the sample
    return preview;
  }
  if (!isJsonObject(payload)) return preview;
  if (ai.thread_key.trim()) preview.threadKey = renderThreadKey(ai.thread_key, payload);
  const conditions = compileConditions(acceptWhen);
  if (conditions) preview.filteredBy = conditions.failing({ payload }) ?? null;
  const guard = EventGuard.of({
    redact: ai.redact.split(',').filter(Boolean) as RedactionKind[],
    restore: ai.restore === 'on',
    spotlight: ai.spotlight === 'on',
  });
  if (guard) {
    const wrap = guard.wrapValue;
    const system = ai.system_prompt ? renderTemplate(ai.system_prompt, payload, wrap) : undefined;
    const sent = guard.guard({
      system,
      history: [],
      prompt: renderTemplate(template, payload, wrap),
    });
    preview.guarded = { system: sent.system, prompt: sent.prompt, redactions: guard.redactions() };
  }
  return preview;
}

import { renderThreadKey } from '../hooks/thread-key.js';
import { isJsonObject, parsePayload } from '../template/index.js';
import type { AiForm } from './ai-form.js';
import { previewTemplate, type Preview } from './template-preview.js';

export interface AiPreview {
  /** The rendered system prompt; undefined when the channel has none. */
  system?: Preview;
  /** The sample's thread key: undefined without a thread_key template, null when it renders empty. */
  threadKey?: string | null;
}

/** The AI section's preview: the system prompt and thread key the sample would give. */
export function previewAi(ai: AiForm, sample: string): AiPreview {
  const preview: AiPreview = {};
  if (ai.system_prompt.trim()) preview.system = previewTemplate(ai.system_prompt, sample);
  if (ai.thread_key.trim()) {
    try {
      const payload = parsePayload(sample);
      if (isJsonObject(payload)) preview.threadKey = renderThreadKey(ai.thread_key, payload);
    } catch {
      // the template preview already says what is wrong with the sample
    }
  }
  return preview;
}

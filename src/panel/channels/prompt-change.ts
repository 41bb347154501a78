import { AI_SETTING_NAMES, type AiSettings } from '../../ai/ai-settings.js';
import { lineDiff, type DiffPart } from './reply-diff.js';

/** A template and AI settings: what a version is, and what a trial's Promote makes the next one. */
export interface PromptSettings {
  template: string;
  ai: AiSettings;
}

/** One AI member that differs: its name in words, and each side as shown. */
export interface AiMemberChange {
  member: string;
  label: string;
  current: string;
  candidate: string;
  /** For the system prompt: a line diff, as for the template. */
  lines?: DiffPart[];
}

/** Everything that differs between two prompts; `template` absent when the template is the same. */
export interface PromptChange {
  template?: DiffPart[];
  ai: AiMemberChange[];
}

/** The AI members as the panel names them. */
const LABELS: Record<(typeof AI_SETTING_NAMES)[number], string> = {
  provider: 'Provider',
  fallbacks: 'Fallbacks',
  model: 'Model',
  system_prompt: 'System prompt',
  temperature: 'Temperature',
  max_tokens: 'Most reply tokens',
  response_format: 'Reply format',
  thread_key: 'Thread key',
  history: 'Earlier turns sent',
  tools: 'Tools',
  max_tool_rounds: 'Most tool rounds',
  prompt_cache: 'Prompt caching',
  images: 'Image paths',
  reply_cache_s: 'Reply cache',
  redact: 'Redaction',
  restore: 'Restore redacted values',
  spotlight: 'Spotlight',
};

/** What changes from `current` to `candidate`: the template as a line diff, each AI member. */
export function promptChange(current: PromptSettings, candidate: PromptSettings): PromptChange {
  const change: PromptChange = { ai: [] };
  if (current.template !== candidate.template) {
    change.template = lineDiff(current.template, candidate.template);
  }
  for (const member of AI_SETTING_NAMES) {
    const before = current.ai[member];
    const after = candidate.ai[member];
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    const shown: AiMemberChange = {
      member,
      label: LABELS[member],
      current: shownValue(before),
      candidate: shownValue(after),
    };
    if (member === 'system_prompt') {
      shown.lines = lineDiff(String(before ?? ''), String(after ?? ''));
    }
    change.ai.push(shown);
  }
  return change;
}

/** Whether anything differs. */
export const changesAnything = (change: PromptChange) =>
  change.template !== undefined || change.ai.length > 0;

function shownValue(value: unknown): string {
  if (value === null || value === undefined) return '(the default)';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

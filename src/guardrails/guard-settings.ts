import { z } from 'zod';
import { REDACTION_KINDS, type RedactionKind } from './redaction-kinds.js';

/** A channel's guardrails, members of its `ai` settings; null means off. */
export interface GuardSettings {
  /** The kinds of values replaced by placeholders in everything sent to the AI. */
  redact: RedactionKind[] | null;
  /** Put the original values back into the reply. */
  restore: boolean | null;
  /** Send each value the templates put in between data tags the model is told about. */
  spotlight: boolean | null;
}

export const GUARD_SETTING_NAMES = [
  'redact',
  'restore',
  'spotlight',
] as const satisfies readonly (keyof GuardSettings)[];

export const DEFAULT_GUARD_SETTINGS: GuardSettings = Object.freeze({
  redact: null,
  restore: null,
  spotlight: null,
});

/** The guardrail members of an `ai` create or PATCH body; a kind named twice counts once. */
export const guardSettingsInputShape = {
  redact: z
    .array(z.enum(REDACTION_KINDS))
    .max(REDACTION_KINDS.length * 2)
    .transform((kinds) => REDACTION_KINDS.filter((kind) => kinds.includes(kind)))
    .nullish(),
  restore: z.boolean().nullish(),
  spotlight: z.boolean().nullish(),
};

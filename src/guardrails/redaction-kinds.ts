import type { Found } from './found.js';
import { findCards, findIbans, findIps, findPhones } from './number-shapes.js';
import { findEmails, findSecrets } from './text-shapes.js';

export type { Found } from './found.js';

/** What a channel may redact, in the order that wins where two kinds overlap. */
export const REDACTION_KINDS = ['secret', 'email', 'card', 'iban', 'ip', 'phone'] as const;
export type RedactionKind = (typeof REDACTION_KINDS)[number];

interface KindRule {
  /** The placeholder's name: `[EMAIL_1]`. */
  label: string;
  /** Every value of the kind in the text, in order, not overlapping each other. */
  find(text: string): Found[];
  /** Values that are the same value written another way get the same placeholder. */
  canonical(value: string): string;
}

const SEPARATORS = /[\s.\-()]/g;
const withoutSeparators = (value: string) => value.replace(SEPARATORS, '');

/** One table of kinds: what each finds, and when two spellings are one value. */
export const KINDS: Readonly<Record<RedactionKind, KindRule>> = {
  secret: { label: 'SECRET', find: findSecrets, canonical: (value) => value },
  email: { label: 'EMAIL', find: findEmails, canonical: (value) => value.toLowerCase() },
  card: { label: 'CARD', find: findCards, canonical: withoutSeparators },
  iban: {
    label: 'IBAN',
    find: findIbans,
    canonical: (value) => withoutSeparators(value).toUpperCase(),
  },
  ip: { label: 'IP', find: findIps, canonical: (value) => value.toLowerCase() },
  phone: { label: 'PHONE', find: findPhones, canonical: withoutSeparators },
};

import { invalidField } from '../platform/errors.js';
import { parsePayload, renderTemplate } from '../template/index.js';

/** `payload.<path>=<value>`: events whose `{{path}}` renders exactly to `value`. */
export interface PayloadCondition {
  path: string;
  value: string;
}

export const PAYLOAD_PREFIX = 'payload.';
const MAX_CONDITIONS = 20;

/**
 * Picks the `payload.<path>` entries out of a query or a JSON body. The path is taken as a
 * template would take it between braces (white space at its ends does not count), so it may
 * not hold braces itself.
 * @throws AppError 400 `validation_failed` for a path with braces, a value given twice or
 *   not as one text, or more conditions than anyone types.
 */
export function takePayloadConditions(input: Record<string, unknown>): {
  conditions: PayloadCondition[];
  rest: Record<string, unknown>;
} {
  const conditions: PayloadCondition[] = [];
  const rest: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(input)) {
    if (!key.startsWith(PAYLOAD_PREFIX)) {
      rest[key] = raw;
      continue;
    }
    const path = key.slice(PAYLOAD_PREFIX.length).trim();
    if (path === '' || path.includes('{{') || path.includes('}}')) {
      throw invalidField(key, 'must name a path of the payload, as written between {{ and }}');
    }
    const value =
      typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : (raw as unknown);
    if (typeof value !== 'string') throw invalidField(key, 'must be given once, as text');
    if (conditions.some((c) => c.path === path)) throw invalidField(key, 'is given twice');
    conditions.push({ path, value });
  }
  if (conditions.length > MAX_CONDITIONS) {
    throw invalidField('payload', `at most ${MAX_CONDITIONS} payload conditions`);
  }
  return { conditions, rest };
}

/**
 * The exact test, by the template engine itself: the database narrows the candidates with its
 * indexes, and this decides, so a filter means exactly what `{{path}}` would render. A body
 * that is not JSON (a refused request's, cut short) has no fields to match.
 */
export function matchesPayload(payload: string, conditions: readonly PayloadCondition[]): boolean {
  if (conditions.length === 0) return true;
  let parsed;
  try {
    parsed = parsePayload(payload);
  } catch {
    return false;
  }
  return conditions.every((c) => renderTemplate(`{{${c.path}}}`, parsed) === c.value);
}

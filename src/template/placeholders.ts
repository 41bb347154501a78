import { compileTemplate, type Placeholder } from './compile-template.js';
import type { JsonValue } from './json-value.js';

/**
 * The distinct paths a template uses, trimmed, in order of first use; `.`
 * is listed when the whole payload is used. `{{}}` names no field and is
 * left out.
 */
export function listPlaceholders(template: string): string[] {
  const seen = new Set<string>();
  for (const placeholder of compileTemplate(template).placeholders) {
    if (placeholder.kind !== 'empty') seen.add(placeholder.path);
  }
  return [...seen];
}

/**
 * The paths of `listPlaceholders` that the payload lacks: absent or null,
 * which is when they would render as the empty string. `.` is never missing.
 */
export function missingPlaceholders(template: string, payload: JsonValue): string[] {
  const seen = new Set<string>();
  const missing: string[] = [];
  for (const placeholder of compileTemplate(template).placeholders) {
    if (placeholder.kind !== 'field' || seen.has(placeholder.path)) continue;
    seen.add(placeholder.path);
    const value = resolvePath(payload, placeholder);
    if (value === undefined || value === null) missing.push(placeholder.path);
  }
  return missing;
}

/**
 * The paths of `missingPlaceholders` over several templates of one event (its prompt template
 * and its system prompt), each path listed once.
 */
export function missingInTemplates(templates: readonly string[], payload: JsonValue): string[] {
  const missing = new Set<string>();
  for (const template of templates) {
    for (const path of missingPlaceholders(template, payload)) missing.add(path);
  }
  return [...missing];
}

/**
 * Follows a placeholder's path through the payload; `undefined` means absent.
 *
 * Objects are Maps, so a key only ever finds the payload's own members:
 * `constructor` or `__proto__` resolve to data or to nothing, never to
 * something inherited. Arrays answer only to canonical indexes, so `length`,
 * `01` or `-1` are absent, and scalars have no fields at all.
 *
 * Senders that post flat objects write dotted names as keys (`{"order.id": 5}`):
 * when the nested reading finds nothing, a top-level key spelled exactly like
 * the path is used instead. Nested fields win, so the fallback never changes a
 * value that the nested reading finds (null included).
 */
export function resolvePath(payload: JsonValue, placeholder: Placeholder): JsonValue | undefined {
  const nested = resolveNested(payload, placeholder);
  if (nested !== undefined || placeholder.keys.length < 2 || !(payload instanceof Map)) {
    return nested;
  }
  return payload.get(placeholder.path);
}

function resolveNested(payload: JsonValue, placeholder: Placeholder): JsonValue | undefined {
  const { keys, indexes } = placeholder;
  let value: JsonValue | undefined = payload;
  for (let i = 0; i < keys.length; i++) {
    if (value instanceof Map) {
      value = value.get(keys[i] as string);
    } else if (Array.isArray(value)) {
      const index = indexes[i] ?? -1;
      value = index >= 0 && index < value.length ? (value[index] as JsonValue) : undefined;
    } else {
      return undefined;
    }
  }
  return value;
}

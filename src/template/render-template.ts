import { compileTemplate } from './compile-template.js';
import { JsonNumber, type JsonValue } from './json-value.js';
import { resolvePath } from './placeholders.js';
import { toJsonText } from './serialize.js';

/** Changes each non-empty value as it is put in (the guardrails' data tags); never the template's own text. */
export type ValueTransform = (text: string) => string;

/**
 * Fills each `{{path}}` of the template from the payload.
 *
 * Values are inserted as they are and never scanned again, so a payload
 * string holding `{{x}}` shows up literally. Every template and every payload
 * renders: malformed braces stay literal text and missing fields are empty.
 * (Payloads are trees as built by `parsePayload`; the only limit left is the
 * engine's maximum string length, far beyond any accepted payload.) `transform`, when given, is
 * applied to each non-empty value inserted.
 */
export function renderTemplate(
  template: string,
  payload: JsonValue,
  transform?: ValueTransform,
): string {
  const { literals, placeholders } = compileTemplate(template);
  let out = literals[0] ?? '';
  for (let i = 0; i < placeholders.length; i++) {
    const placeholder = placeholders[i];
    if (placeholder !== undefined && placeholder.kind !== 'empty') {
      const text =
        placeholder.kind === 'field'
          ? renderValue(resolvePath(payload, placeholder))
          : toJsonText(payload);
      out += transform !== undefined && text !== '' ? transform(text) : text;
    }
    out += literals[i + 1] ?? '';
  }
  return out;
}

/** How one resolved value appears in the rendered text (absent and null: empty). */
export function renderValue(value: JsonValue | undefined): string {
  if (typeof value === 'string') return value;
  if (value instanceof JsonNumber) return value.text;
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value instanceof Map || Array.isArray(value)) return toJsonText(value);
  return '';
}

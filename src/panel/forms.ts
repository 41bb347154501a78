import { ZodError } from 'zod';

/** Text from a textarea: browsers send CRLF line breaks, stored text uses LF. */
export function textareaText(value: string): string {
  return value.replace(/\r\n?/g, '\n');
}

/** Field name → message, for showing a rejected form again next to its fields. */
export type FieldErrors = Record<string, string>;

export function fieldErrors(error: unknown): FieldErrors | undefined {
  if (!(error instanceof ZodError)) return undefined;
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const field = String(issue.path[0] ?? 'form');
    errors[field] ??= issue.message;
  }
  return errors;
}

/** Text typed as a JSON object (a tool's input, its schema, a trial's reply), else undefined. */
export function jsonObjectText(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

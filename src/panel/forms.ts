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

import { ZodError } from 'zod';
import { channelIdSchema } from '../channels/channels-schemas.js';
import { notFound } from '../platform/errors.js';

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

/** A path id that cannot belong to anything answers like an unknown one: 404. */
export function pathId(raw: unknown, what: string): string {
  const parsed = channelIdSchema.safeParse(raw);
  if (!parsed.success) throw notFound(what);
  return parsed.data;
}

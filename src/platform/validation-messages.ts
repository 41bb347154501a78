import { z } from 'zod';

/**
 * Words a person can act on for every validation problem zod reports, for the API, the panel and
 * the configuration alike. Messages follow the field's name ("from: must be ..."), so they start
 * in lower case. A schema's own message still wins over these.
 */
export const ISO_TIME_HINT =
  'must be an ISO 8601 time such as 2026-11-23T10:00:00Z or 2026-11-23 ' +
  '(in a URL, write the + of an offset as %2B)';

export const SEND_JSON_HINT =
  'send a JSON object as the body, with the header Content-Type: application/json';

type Issue = z.core.$ZodRawIssue;

export function readableMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return invalidType(issue);
    case 'too_small':
      return tooSmall(issue.origin, Number(issue.minimum), issue.inclusive !== false);
    case 'too_big':
      return tooBig(issue.origin, Number(issue.maximum), issue.inclusive !== false);
    case 'invalid_format':
      return invalidFormat(issue.format);
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return isTimeUnion(issue.errors) ? ISO_TIME_HINT : undefined;
    case 'unrecognized_keys':
      return unrecognizedKeys(issue.keys, issue.inst);
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    default:
      return undefined;
  }
}

z.config({ customError: (issue) => readableMessage(issue) });

const TYPE_NAMES: Record<string, string> = {
  object: 'a JSON object',
  array: 'a list (JSON array)',
  string: 'text (a JSON string)',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  null: 'null',
};

function invalidType(issue: Extract<Issue, { code: 'invalid_type' }>): string {
  const path = issue.path ?? [];
  if (issue.input === undefined) return path.length === 0 ? SEND_JSON_HINT : 'is required';
  const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
  return `must be ${expected}, not ${describe(issue.input)}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number') return Number.isInteger(value) ? 'a whole number' : String(value);
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

function tooSmall(origin: string, minimum: number, inclusive: boolean): string {
  const least = inclusive ? minimum : minimum + 1;
  if (origin === 'string')
    return least <= 1 ? 'must not be empty' : `must be at least ${least} characters long`;
  if (origin === 'array' || origin === 'set')
    return `must have at least ${least} item${least === 1 ? '' : 's'}`;
  return inclusive ? `must be at least ${minimum}` : `must be greater than ${minimum}`;
}

function tooBig(origin: string, maximum: number, inclusive: boolean): string {
  const most = inclusive ? maximum : maximum - 1;
  if (origin === 'string') return `must be at most ${most} characters long`;
  if (origin === 'array' || origin === 'set')
    return `must have at most ${most} item${most === 1 ? '' : 's'}`;
  return inclusive ? `must be at most ${maximum}` : `must be less than ${maximum}`;
}

function invalidFormat(format: string): string {
  switch (format) {
    case 'datetime':
    case 'date':
      return ISO_TIME_HINT;
    case 'email':
      return 'must be an e-mail address such as ada@example.com';
    case 'url':
      return 'must be a URL such as https://example.com/path';
    case 'regex':
      return 'is not in the expected form';
    default:
      return `must be a valid ${format}`;
  }
}

/** Both branches of `z.iso.datetime().or(z.iso.date())` failed on their format. */
function isTimeUnion(branches: readonly (readonly z.core.$ZodIssue[])[]): boolean {
  return (
    branches.length > 0 &&
    branches.every((issues) =>
      issues.some(
        (i) => i.code === 'invalid_format' && (i.format === 'datetime' || i.format === 'date'),
      ),
    )
  );
}

function unrecognizedKeys(keys: string[], schema: unknown): string {
  const names = keys.map((key) => JSON.stringify(key)).join(', ');
  const shape = (schema as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
  const known = shape ? Object.keys(shape) : [];
  const which = keys.length === 1 ? `${names} is not a known name` : `${names} are not known names`;
  return known.length ? `${which}; use ${known.join(', ')}` : which;
}

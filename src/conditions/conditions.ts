import { renderValue, resolvePath, type JsonValue } from '../template/index.js';
import { parseConditionPath, type ConditionPath, type PathScope } from './condition-paths.js';
import { asNumber, type Condition } from './condition-schemas.js';

/** What conditions are checked against; a scope left out reads as absent. */
export interface ConditionSubject {
  payload?: JsonValue;
  status?: string;
  json?: JsonValue;
}

/** A list of conditions made ready once (per channel settings) and checked per event. */
export interface CompiledConditions {
  /** The first condition that does not hold, described (`payload.type eq "order"`); undefined when all hold. */
  failing(subject: ConditionSubject): string | undefined;
}

type Check = (subject: ConditionSubject) => boolean;

/** Undefined for an empty list: everything is accepted without a look at the payload. */
export function compileConditions(
  conditions: readonly Condition[] | null | undefined,
  scopes: readonly PathScope[] = ['payload'],
): CompiledConditions | undefined {
  if (!conditions?.length) return undefined;
  const checks = conditions.map((condition) => ({
    check: compileOne(condition, scopes),
    description: describeCondition(condition),
  }));
  return {
    failing(subject) {
      for (const { check, description } of checks) if (!check(subject)) return description;
      return undefined;
    },
  };
}

/** How a condition is shown: `payload.amount gt 100`, `payload.type in ["a","b"]`. */
export function describeCondition({ path, op, value }: Condition): string {
  return value === undefined ? `${path} ${op}` : `${path} ${op} ${JSON.stringify(value)}`;
}

function compileOne(condition: Condition, scopes: readonly PathScope[]): Check {
  const path = parseConditionPath(condition.path, scopes);
  // Stored conditions were checked when saved; one that no longer reads never holds.
  if (typeof path === 'string') return () => false;
  const read = reader(path);
  const { op, value } = condition;
  const text = String(value);
  switch (op) {
    case 'exists':
      return (subject) => present(read(subject));
    case 'not_exists':
      return (subject) => !present(read(subject));
    case 'eq':
      return (subject) => rendered(read(subject)) === text;
    case 'ne':
      return (subject) => rendered(read(subject)) !== text;
    case 'contains':
      return (subject) => rendered(read(subject)).includes(text);
    case 'in': {
      const texts = new Set((Array.isArray(value) ? value : [value]).map(String));
      return (subject) => texts.has(rendered(read(subject)));
    }
    default: {
      const bound = asNumber(text);
      const holds = COMPARE[op];
      return (subject) => {
        const number = asNumber(rendered(read(subject)));
        return Number.isFinite(number) && Number.isFinite(bound) && holds(number, bound);
      };
    }
  }
}

const COMPARE: Record<'gt' | 'gte' | 'lt' | 'lte', (a: number, b: number) => boolean> = {
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
};

type Read = (subject: ConditionSubject) => JsonValue | undefined;

function reader({ scope, placeholder }: ConditionPath): Read {
  if (scope === 'status') return (subject) => subject.status;
  if (!placeholder) return () => undefined;
  return (subject) => {
    const root = subject[scope];
    return root === undefined ? undefined : resolvePath(root, placeholder);
  };
}

/** Present means neither absent nor null, as for the placeholders an event reports `missing`. */
const present = (value: JsonValue | undefined) => value !== undefined && value !== null;

/** The text `{{path}}` renders. */
const rendered = (value: JsonValue | undefined) => renderValue(value);

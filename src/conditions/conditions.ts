import {
  PayloadPathReader,
  PayloadPaths,
  foundValue,
  resolvePath,
  type FoundValue,
  type JsonValue,
  type Placeholder,
} from '../template/index.js';
import { parseConditionPath, type ConditionPath, type PathScope } from './condition-paths.js';
import { asNumber, type Condition } from './condition-schemas.js';

/**
 * What conditions are checked against; a scope left out reads as absent. The payload is its
 * tree, or its text read at the conditions' paths (`readPayload`): both read alike.
 */
export interface ConditionSubject {
  payload?: JsonValue | PayloadPaths;
  status?: string;
  /** The reply parsed, when it is JSON: what `json.<p>` and `reply.<p>` read. */
  json?: JsonValue;
  /** The reply's text: what `reply` reads. */
  reply?: string;
}

/** A list of conditions made ready once (per channel settings) and checked per event. */
export interface CompiledConditions {
  /** The first condition that does not hold, described (`payload.type eq "order"`); undefined when all hold. */
  failing(subject: ConditionSubject): string | undefined;
  /**
   * A payload's text read at the conditions' payload paths only, for `failing` to check: no
   * tree of the whole payload is built (the receiver's large bodies).
   * @throws InvalidJsonError for a text parsePayload refuses
   */
  readPayload(text: string): PayloadPaths;
}

type Check = (readings: Readings) => boolean;

/** Undefined for an empty list: everything is accepted without a look at the payload. */
export function compileConditions(
  conditions: readonly Condition[] | null | undefined,
  scopes: readonly PathScope[] = ['payload'],
): CompiledConditions | undefined {
  if (!conditions?.length) return undefined;
  const paths = new DistinctPaths();
  const checks = conditions.map((condition) => ({
    check: compileOne(condition, scopes, paths),
    description: describeCondition(condition),
  }));
  const { reads } = paths;
  const payloadReader = new PayloadPathReader(paths.payloadPlaceholders);
  return {
    failing(subject) {
      const readings = new Readings(subject, reads);
      for (const { check, description } of checks) if (!check(readings)) return description;
      return undefined;
    },
    readPayload: (text) => payloadReader.read(text),
  };
}

/** How a condition is shown: `payload.amount gt 100`, `payload.type in ["a","b"]`. */
export function describeCondition({ path, op, value }: Condition): string {
  return value === undefined ? `${path} ${op}` : `${path} ${op} ${JSON.stringify(value)}`;
}

/** The distinct paths of a list of conditions, each given a number and a reader once. */
class DistinctPaths {
  readonly reads: Read[] = [];
  /** The placeholders of the distinct `payload.<p>` paths. */
  readonly payloadPlaceholders: Placeholder[] = [];
  private readonly numbers = new Map<string, number>();

  numberOf(path: ConditionPath): number {
    const key = `${path.scope}.${path.placeholder?.path ?? ''}`;
    let number = this.numbers.get(key);
    if (number === undefined) {
      number = this.reads.push(reader(path)) - 1;
      this.numbers.set(key, number);
      if (path.scope === 'payload' && path.placeholder) {
        this.payloadPlaceholders.push(path.placeholder);
      }
    }
    return number;
  }
}

/**
 * What one check of a subject has read so far, by path: each distinct path is read, and
 * rendered, at most once however many conditions name it (a large object under a path is
 * rendered once, not once per condition).
 */
class Readings {
  private readonly found = new Map<number, FoundValue>();
  private readonly texts = new Map<number, string>();

  constructor(
    private readonly subject: ConditionSubject,
    private readonly reads: readonly Read[],
  ) {}

  /** Whether the path holds a value other than null. */
  present(path: number): boolean {
    return this.value(path).present;
  }

  /** The text `{{path}}` renders. */
  text(path: number): string {
    let text = this.texts.get(path);
    if (text === undefined) {
      text = this.value(path).render();
      this.texts.set(path, text);
    }
    return text;
  }

  private value(path: number): FoundValue {
    let found = this.found.get(path);
    if (found === undefined) {
      found = (this.reads[path] as Read)(this.subject);
      this.found.set(path, found);
    }
    return found;
  }
}

function compileOne(
  condition: Condition,
  scopes: readonly PathScope[],
  paths: DistinctPaths,
): Check {
  const parsed = parseConditionPath(condition.path, scopes);
  // Stored conditions were checked when saved; one that no longer reads never holds.
  if (typeof parsed === 'string') return () => false;
  const path = paths.numberOf(parsed);
  const { op, value } = condition;
  const text = String(value);
  switch (op) {
    case 'exists':
      return (readings) => readings.present(path);
    case 'not_exists':
      return (readings) => !readings.present(path);
    case 'eq':
      return (readings) => readings.text(path) === text;
    case 'ne':
      return (readings) => readings.text(path) !== text;
    case 'contains':
      return (readings) => readings.text(path).includes(text);
    case 'in': {
      const texts = new Set((Array.isArray(value) ? value : [value]).map(String));
      return (readings) => texts.has(readings.text(path));
    }
    default: {
      const bound = asNumber(text);
      const holds = COMPARE[op];
      return (readings) => {
        const number = asNumber(readings.text(path));
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

type Read = (subject: ConditionSubject) => FoundValue;

function reader({ scope, placeholder }: ConditionPath): Read {
  if (scope === 'status') return (subject) => foundValue(subject.status);
  if (scope === 'reply' && !placeholder) return (subject) => foundValue(subject.reply);
  if (!placeholder) return () => foundValue(undefined);
  const rootOf = scope === 'reply' ? 'json' : scope;
  return (subject) => {
    const root = subject[rootOf];
    if (root instanceof PayloadPaths) return root.find(placeholder);
    return foundValue(root === undefined ? undefined : resolvePath(root, placeholder));
  };
}

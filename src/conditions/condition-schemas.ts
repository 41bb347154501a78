import { z } from 'zod';
import { parseConditionPath, type PathScope } from './condition-paths.js';

/** The comparisons a condition can make. */
export const CONDITION_OPS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'exists',
  'not_exists',
  'contains',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

const NUMERIC_OPS: readonly ConditionOp[] = ['gt', 'gte', 'lt', 'lte'];
const TEXT_OPS: readonly ConditionOp[] = ['eq', 'ne', 'contains'];

const scalar = z.union([z.string().max(1_000), z.number(), z.boolean()]);

/** One condition as stored and shown. */
export interface Condition {
  path: string;
  op: ConditionOp;
  value?: string | number | boolean | (string | number | boolean)[];
}

/** One `{path, op, value?}` over the given scopes (`payload.<p>`; later `status`, `json.<p>`). */
export function conditionSchema(scopes: readonly PathScope[]) {
  return z
    .strictObject({
      path: z.string().max(1_000),
      op: z.enum(CONDITION_OPS),
      value: z.union([scalar, z.array(scalar).max(100)]).optional(),
    })
    .superRefine((condition, ctx) => {
      const path = parseConditionPath(condition.path, scopes);
      if (typeof path === 'string') ctx.addIssue({ code: 'custom', path: ['path'], message: path });
      const problem = valueProblem(condition);
      if (problem) ctx.addIssue({ code: 'custom', path: ['value'], message: problem });
    }) satisfies z.ZodType<Condition>;
}

function valueProblem({ op, value }: Condition): string | undefined {
  if (op === 'exists' || op === 'not_exists') {
    return value === undefined ? undefined : `is not used by ${op}`;
  }
  if (op === 'in') return Array.isArray(value) ? undefined : 'must be a list of texts for in';
  if (value === undefined || Array.isArray(value)) return `must be one value for ${op}`;
  if (NUMERIC_OPS.includes(op) && !Number.isFinite(asNumber(String(value)))) {
    return `must be a number for ${op}`;
  }
  return TEXT_OPS.includes(op) || NUMERIC_OPS.includes(op) ? undefined : `is not used by ${op}`;
}

const NUMBER_TEXT = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$/;

/** A rendered text read as a number; NaN when it is not one (an empty text included). */
export function asNumber(text: string): number {
  return NUMBER_TEXT.test(text) ? Number(text) : Number.NaN;
}

/** A channel's `accept_when`: up to 20 conditions over `payload.<path>`, all of which must hold. */
export const acceptWhenSchema = z.array(conditionSchema(['payload'])).max(20);

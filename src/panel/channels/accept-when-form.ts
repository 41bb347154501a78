import type { z } from 'zod';
import {
  acceptWhenSchema,
  CONDITION_OPS,
  type Condition,
} from '../../conditions/condition-schemas.js';
import { describeCondition } from '../../conditions/conditions.js';

/**
 * The channel editor writes `accept_when` one condition a line, as Brain Logs shows a condition
 * that did not hold: `payload.type eq "order"`, `payload.amount gt 100`, `payload.tag in ["a","b"]`,
 * `payload.id exists`. A value that is not JSON is taken as text.
 */
export function acceptWhenText(conditions: readonly Condition[]): string {
  return conditions.map(describeCondition).join('\n');
}

/**
 * The conditions of the field, checked as the API checks them (`schema`: accept_when's, or a
 * destination's `when`), or what is wrong and where.
 */
export function parseAcceptWhenText(
  text: string,
  schema: z.ZodType<Condition[]> = acceptWhenSchema,
): { conditions?: Condition[]; error?: string } {
  const candidates: unknown[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const match = /^\s*(\S+)\s+(\S+)(?:\s+(.*?))?\s*$/.exec(line);
    if (!match || !(CONDITION_OPS as readonly string[]).includes(match[2] as string)) {
      return {
        error: `Line ${i + 1}: write a path, one of ${CONDITION_OPS.join(', ')}, then a value.`,
      };
    }
    const [, path, op, value] = match;
    candidates.push(value === undefined ? { path, op } : { path, op, value: valueOf(value) });
  }
  const parsed = schema.safeParse(candidates);
  if (parsed.success) return { conditions: parsed.data };
  const issue = parsed.error.issues[0];
  const line = typeof issue?.path[0] === 'number' ? `Condition ${issue.path[0] + 1}` : 'The list';
  const member = issue?.path.slice(1).join('.');
  return { error: `${line}${member ? ` (${member})` : ''}: ${issue?.message ?? 'is not valid'}` };
}

function valueOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

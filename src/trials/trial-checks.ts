import { compileConditions, type CompiledConditions } from '../conditions/conditions.js';
import type { Condition } from '../conditions/condition-schemas.js';
import { parsePayload, type JsonValue } from '../template/index.js';

/** One check on one side of a result: whether it holds. */
export interface CheckResult {
  ok: boolean;
}

/** What a check reads of one side of a result. */
interface CheckedSide {
  status: string;
  reply: string | null;
}

/**
 * A trial's checks made ready once and applied to each side of each result, each on its own: a
 * side's `checks` say which hold, in the conditions' order.
 */
export class TrialChecks {
  private readonly compiled: CompiledConditions[];

  constructor(conditions: readonly Condition[]) {
    this.compiled = conditions.flatMap(
      (condition) => compileConditions([condition], ['status', 'reply']) ?? [],
    );
  }

  of(side: CheckedSide): CheckResult[] {
    const subject = {
      status: side.status,
      reply: side.reply ?? undefined,
      json: side.reply === null ? undefined : jsonOf(side.reply),
    };
    return this.compiled.map((check) => ({ ok: check.failing(subject) === undefined }));
  }
}

/** The reply parsed, when it is JSON: what `reply.<path>` reads. */
function jsonOf(reply: string): JsonValue | undefined {
  try {
    return parsePayload(reply);
  } catch {
    return undefined;
  }
}

import type { Queryable } from '../db/database.js';
import type { ToolCallRecord } from './tool-rounds.js';

/** What one round of tool calls leaves on the event before the model is asked again. */
export interface RoundRecord {
  eventId: string;
  /** The attempt's tool calls so far (the kept ones). */
  toolCalls: readonly ToolCallRecord[];
  /** The guardrails' counts and placeholders, grown by the results redacted. */
  redactions: Record<string, number> | null;
  redactionValues: Record<string, string> | null;
}

/**
 * Stores an attempt's tool calls after a round, with the redactions its results added, and
 * renews the lease for the next call (a reply of several rounds may outlast one lease). Only the
 * lease's owner may write; resolves to false when the event was lost.
 */
export async function recordToolRound(
  db: Queryable,
  workerId: string,
  leaseMs: number,
  record: RoundRecord,
): Promise<boolean> {
  const { rows } = await db.query(
    `update events set
       tool_calls = $3::jsonb,
       redactions = coalesce($4::jsonb, redactions),
       redaction_values = coalesce($5::jsonb, redaction_values),
       locked_until = now() + $6::integer * interval '1 millisecond'
     where id = $1 and locked_by = $2 and status = 'processing'
     returning id`,
    [
      record.eventId,
      workerId,
      JSON.stringify(record.toolCalls),
      record.redactions ? JSON.stringify(record.redactions) : null,
      record.redactionValues ? JSON.stringify(record.redactionValues) : null,
      leaseMs,
    ],
  );
  return rows.length === 1;
}

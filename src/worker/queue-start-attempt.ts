import type { Queryable } from '../db/database.js';
import { textArrayLiteral } from '../db/sql.js';
import { overBudget } from '../spend/budget-sql.js';

/** An AI call about to be made for a claimed event. */
export interface Start {
  eventId: string;
  prompt: string;
  /** The placeholders the payload lacked. */
  missing: readonly string[];
  /** The provider (by name) the attempt asks first. */
  provider: string;
  /** The model the call names, or null (the echo without AI_MODEL). */
  model: string | null;
  /** The call's input was cut to AI_MAX_INPUT_CHARS (false when not given). */
  inputTruncated?: boolean;
  /** `{kind: distinct values}` the guardrails redacted; null or absent: no redaction. */
  redactions?: Record<string, number> | null;
  /** The placeholders sent and their values (never shown; for reading the event as history). */
  redactionValues?: Record<string, string> | null;
  /** A conversation taken up after an approval: its tool calls so far are kept. */
  resumed?: boolean;
}

/** The statement of startAttempts, built once. */
const START_ATTEMPTS = `with no_flush_wait as materialized (select set_config('synchronous_commit', 'off', true)),
  started as (
    select * from unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::boolean[],
                         $8::text[], $9::text[], $10::text[], $11::boolean[])
      as started(id, prompt, missing, model, input_truncated, redactions, redaction_values,
                 provider, resumed)
  ),
  over_budget as (
    select events.id from started
    join events on events.id = started.id
    join workspaces on workspaces.id = events.workspace_id
    where ${overBudget('workspaces')}
  ),
  held_back as (
    update events set status = 'pending', run_at = now(), locked_by = null, locked_until = null
    where events.id in (select id from over_budget)
      and events.locked_by = $1 and events.status = 'processing'
    returning events.id
  ),
  counted as (
    update events set
      attempts = events.attempts + 1,
      prompt = started.prompt,
      missing = started.missing::text[],
      provider = started.provider,
      model = started.model,
      input_truncated = started.input_truncated,
      redactions = started.redactions::jsonb,
      redaction_values = started.redaction_values::jsonb,
      tool_calls = case when started.resumed then events.tool_calls else '[]' end,
      attachments = case when started.resumed then events.attachments else '[]' end,
      locked_until = now() + $2::integer * interval '1 millisecond'
    from started
    where events.id = started.id and events.locked_by = $1 and events.status = 'processing'
      and events.id not in (select id from over_budget)
      and exists (select from no_flush_wait)
    returning events.id, events.attempts
  )
  select id, attempts from counted
  union all
  select id, null from held_back`;

/** An event whose workspace has spent its budget: given back as `pending`, no call made. */
export const OVER_BUDGET = 'over_budget';

/**
 * Records that AI calls are about to be made, several in one statement (the events of one claim
 * start together): stores each prompt (as sent), the placeholders it missed, the provider and
 * model it asks first and whether its input was cut,
 * counts the attempt and renews the lease so it covers the call from its start. Resolves to the
 * new attempt count of each event this worker still holds; an event missing from the answer was
 * lost (its lease ran out and another worker claimed it): then no call may be made.
 *
 * An event whose workspace has spent its monthly budget meanwhile (it was claimed ahead, or the
 * budget was reached since its claim) is given back as `pending`, its attempt not counted, and
 * answered OVER_BUDGET: no new call starts past the budget, only those already under way finish.
 *
 * Counting before the call, not after, means a call cut short by a crash still counts, so an
 * event that keeps killing its worker mid-call cannot be tried forever.
 *
 * The statement commits without waiting for the WAL flush (`synchronous_commit` off, for this
 * statement only): every call waited for it, 4–11 ms at the median on a busy database, and at
 * 128 slots that cost 3–21 % of the replies per second (bench/HISTORY.md). A worker that dies
 * still leaves the attempt counted, since PostgreSQL flushes it within `wal_writer_delay`;
 * only a crash of PostgreSQL itself in that moment can lose it, and the event then gets one
 * call more. Any later write of the event (its reply) is flushed after it, never before.
 */
export async function startAttempts(
  db: Queryable,
  workerId: string,
  leaseMs: number,
  starts: readonly Start[],
  deadline?: number,
): Promise<Map<string, number | typeof OVER_BUDGET>> {
  const { rows } = await db.query<{ id: string; attempts: number | null }>(
    START_ATTEMPTS,
    [
      workerId,
      leaseMs,
      starts.map((start) => start.eventId),
      starts.map((start) => start.prompt),
      starts.map((start) => textArrayLiteral(start.missing)),
      starts.map((start) => start.model),
      starts.map((start) => start.inputTruncated ?? false),
      starts.map((start) => (start.redactions ? JSON.stringify(start.redactions) : null)),
      starts.map((start) => (start.redactionValues ? JSON.stringify(start.redactionValues) : null)),
      starts.map((start) => start.provider),
      starts.map((start) => start.resumed ?? false),
    ],
    // Planned for each call, not prepared under a name: see claimEvents.
    { deadline },
  );
  return new Map(rows.map((row) => [row.id, row.attempts ?? OVER_BUDGET]));
}

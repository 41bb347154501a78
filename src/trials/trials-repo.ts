import type { Queryable } from '../db/database.js';
import { overBudget } from '../spend/budget-sql.js';
import type { CandidateOutcome, StoredOutcome } from './trial-outcomes.js';

/** The NOTIFY channel on which a new trial wakes the trial workers. */
export const TRIALS_CHANNEL = 'hookprompt_trials';

export interface TrialRow {
  id: string;
  workspace_id: string;
  channel_id: string;
  status: 'running' | 'done' | 'canceled';
  /** What was given: `{template?, ai?}`. */
  candidate: { template?: string; ai?: unknown };
  /** What is asked, and what promote makes the next version. */
  template: string;
  ai: unknown;
  total: number;
  done: number;
  created_at: Date;
  finished_at: Date | null;
}

export interface TrialResultRow {
  trial_id: string;
  position: number;
  event_id: string;
  current: StoredOutcome;
  candidate: CandidateOutcome | null;
}

const TRIAL_COLUMNS = `id, workspace_id, channel_id, status, candidate, template, ai, total, done,
  created_at, finished_at`;

/** An event a trial may be asked on, with its stored outcome. */
export interface TrialEventRow extends StoredOutcome {
  id: string;
  channel_id: string;
  payload: string;
  payload_truncated: boolean;
}

const EVENT_OUTCOME = `id, channel_id, payload, payload_truncated, version, status, prompt, reply,
  error, usage, cost_usd::float8 as cost_usd, latency_ms`;

/** A page of the channel's events, newest first, before the event `beforeId` (none: the newest). */
export async function newestEvents(
  db: Queryable,
  workspaceId: string,
  channelId: string,
  beforeId: string | undefined,
  limit: number,
): Promise<TrialEventRow[]> {
  const { rows } = await db.query<TrialEventRow>(
    `select ${EVENT_OUTCOME} from events
     where workspace_id = $1 and channel_id = $2 and ($3::bigint is null or id < $3)
     order by id desc limit $4`,
    [workspaceId, channelId, beforeId ?? null, limit],
  );
  return rows;
}

/** The workspace's events with these ids (any channel; the caller checks). */
export async function eventsByIds(
  db: Queryable,
  workspaceId: string,
  ids: readonly string[],
): Promise<TrialEventRow[]> {
  const { rows } = await db.query<TrialEventRow>(
    `select ${EVENT_OUTCOME} from events where workspace_id = $1 and id = any ($2::bigint[])`,
    [workspaceId, ids],
  );
  return rows;
}

/** The first `chars` characters of the payloads of these events of the workspace, by id. */
export async function payloadStarts(
  db: Queryable,
  workspaceId: string,
  ids: readonly string[],
  chars: number,
): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; start: string }>(
    `select id, left(payload, $3) as start from events
     where workspace_id = $1 and id = any ($2::bigint[])`,
    [workspaceId, ids, chars],
  );
  return new Map(rows.map((row) => [String(row.id), row.start]));
}

export interface NewTrial {
  workspaceId: string;
  channelId: string;
  candidate: { template?: string; ai?: unknown };
  template: string;
  ai: unknown;
  events: readonly TrialEventRow[];
}

/** Stores a trial and its chosen events in order, and wakes the trial workers. */
export async function insertTrial(db: Queryable, trial: NewTrial): Promise<TrialRow> {
  const { rows } = await db.query<TrialRow>(
    `insert into trials (workspace_id, channel_id, candidate, template, ai, total)
     values ($1, $2, $3, $4, $5, $6)
     returning ${TRIAL_COLUMNS}`,
    [
      trial.workspaceId,
      trial.channelId,
      JSON.stringify(trial.candidate),
      trial.template,
      JSON.stringify(trial.ai),
      trial.events.length,
    ],
  );
  const row = rows[0] as TrialRow;
  await db.query(
    `insert into trial_results (trial_id, position, event_id, current)
     select $1, ordinality - 1, event_id, current::jsonb
     from unnest($2::bigint[], $3::text[]) with ordinality as chosen(event_id, current)`,
    [
      row.id,
      trial.events.map((event) => event.id),
      trial.events.map((event) => JSON.stringify(storedOutcome(event))),
    ],
  );
  await db.query(`select pg_notify('${TRIALS_CHANNEL}', '')`);
  return row;
}

function storedOutcome(event: TrialEventRow): StoredOutcome {
  return {
    version: event.version,
    status: event.status,
    prompt: event.prompt,
    reply: event.reply,
    error: event.error,
    usage: event.usage,
    cost_usd: event.cost_usd,
    latency_ms: event.latency_ms,
  };
}

export async function findTrial(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<TrialRow | undefined> {
  const { rows } = await db.query<TrialRow>(
    `select ${TRIAL_COLUMNS} from trials where workspace_id = $1 and id = $2`,
    [workspaceId, id],
  );
  return rows[0];
}

/** The channel's trials, newest first (the last 100). */
export async function listTrials(
  db: Queryable,
  workspaceId: string,
  channelId: string,
): Promise<TrialRow[]> {
  const { rows } = await db.query<TrialRow>(
    `select ${TRIAL_COLUMNS} from trials where workspace_id = $1 and channel_id = $2
     order by id desc limit 100`,
    [workspaceId, channelId],
  );
  return rows;
}

/** The results of these trials, each trial's in order. */
export async function trialResults(
  db: Queryable,
  trialIds: readonly string[],
): Promise<TrialResultRow[]> {
  const { rows } = await db.query<TrialResultRow>(
    `select trial_id, position, event_id, current, candidate from trial_results
     where trial_id = any ($1::bigint[]) order by trial_id, position`,
    [trialIds],
  );
  return rows;
}

/** Stops a running trial: results not yet asked stay unasked. */
export async function cancelTrial(db: Queryable, workspaceId: string, id: string): Promise<void> {
  await db.query(
    `update trials set status = 'canceled', finished_at = now()
     where workspace_id = $1 and id = $2 and status = 'running'`,
    [workspaceId, id],
  );
}

/** A result claimed to be asked, with what it is asked with. */
export interface ClaimedTrialResult {
  /** `trial_id:position`: how the queue loop knows it. */
  id: string;
  trial_id: string;
  position: number;
  event_id: string;
  workspace_id: string;
  channel_id: string;
  template: string;
  ai: unknown;
  /** Null when the event is gone (retention deleted it since the trial started). */
  payload: string | null;
  thread_key: string | null;
  budgeted: boolean;
}

/**
 * Reserves up to `limit` unasked results of running trials for `workerId`, oldest trial first,
 * in one statement. A result whose worker died is taken again once its lease ends; results of a
 * workspace that has spent its budget wait, as its events do.
 */
export async function claimTrialResults(
  db: Queryable,
  workerId: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedTrialResult[]> {
  const { rows } = await db.query<ClaimedTrialResult>(
    `with next as (
       select r.trial_id, r.position from trial_results r
       join trials t on t.id = r.trial_id
       join workspaces w on w.id = t.workspace_id
       where r.candidate is null and t.status = 'running'
         and (r.locked_until is null or r.locked_until <= now())
         and not ${overBudget('w')}
       order by r.trial_id, r.position
       limit $2
       for update of r skip locked
     )
     update trial_results r set
       locked_by = $1,
       locked_until = now() + $3::integer * interval '1 millisecond'
     from next, trials t, workspaces w
     where r.trial_id = next.trial_id and r.position = next.position
       and t.id = r.trial_id and w.id = t.workspace_id
     returning r.trial_id || ':' || r.position as id, r.trial_id, r.position, r.event_id,
       t.workspace_id, t.channel_id, t.template, t.ai,
       (select payload from events e where e.id = r.event_id) as payload,
       (select thread_key from events e where e.id = r.event_id) as thread_key,
       w.monthly_budget_usd is not null as budgeted`,
    [workerId, limit, leaseMs],
  );
  return rows;
}

/**
 * Stores a result's candidate outcome and counts it on its trial, which is done with its last
 * one. False when the lease was lost (another worker took the result over).
 */
export async function finishTrialResult(
  db: Queryable,
  workerId: string,
  result: Pick<ClaimedTrialResult, 'trial_id' | 'position'>,
  outcome: CandidateOutcome,
): Promise<boolean> {
  const { rows } = await db.query(
    `with stored as (
       update trial_results set candidate = $4::jsonb, locked_by = null, locked_until = null
       where trial_id = $2 and position = $3 and locked_by = $1 and candidate is null
       returning trial_id
     )
     update trials set
       done = done + 1,
       status = case when status = 'running' and done + 1 >= total then 'done' else status end,
       finished_at = case when status = 'running' and done + 1 >= total then now()
                          else finished_at end
     where id = (select trial_id from stored)
     returning id`,
    [workerId, result.trial_id, result.position, JSON.stringify(outcome)],
  );
  return rows.length > 0;
}

/** Gives back a result claimed and not asked, due at once. */
export async function releaseTrialResult(
  db: Queryable,
  workerId: string,
  result: Pick<ClaimedTrialResult, 'trial_id' | 'position'>,
): Promise<void> {
  await db.query(
    `update trial_results set locked_by = null, locked_until = null
     where trial_id = $2 and position = $3 and locked_by = $1 and candidate is null`,
    [workerId, result.trial_id, result.position],
  );
}

import type { Queryable } from '../db/database.js';
import type { Condition } from '../conditions/condition-schemas.js';
import type { JudgeVerdict } from './trial-judge.js';
import type { CandidateOutcome, StoredOutcome } from './trial-outcomes.js';
import type { TrialJudge } from './trials-schemas.js';

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
  /** Conditions applied to each side of each result; null when the trial has none. */
  checks: Condition[] | null;
  /** The model comparing each result's two replies; null when the trial has none. */
  judge: TrialJudge | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface TrialResultRow {
  trial_id: string;
  position: number;
  event_id: string;
  current: StoredOutcome;
  candidate: CandidateOutcome | null;
  /** Null until asked, and for results whose two sides did not both reply. */
  judge: JudgeVerdict | null;
  judge_cost_usd: number | null;
}

const TRIAL_COLUMNS = `id, workspace_id, channel_id, status, candidate, template, ai, total, done,
  checks, judge, created_at, finished_at`;

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
  checks: readonly Condition[] | undefined;
  judge: TrialJudge | undefined;
}

/** Stores a trial and its chosen events in order, and wakes the trial workers. */
export async function insertTrial(db: Queryable, trial: NewTrial): Promise<TrialRow> {
  const { rows } = await db.query<TrialRow>(
    `insert into trials (workspace_id, channel_id, candidate, template, ai, total, checks, judge)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     returning ${TRIAL_COLUMNS}`,
    [
      trial.workspaceId,
      trial.channelId,
      JSON.stringify(trial.candidate),
      trial.template,
      JSON.stringify(trial.ai),
      trial.events.length,
      trial.checks ? JSON.stringify(trial.checks) : null,
      trial.judge ? JSON.stringify(trial.judge) : null,
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
    `select trial_id, position, event_id, current, candidate, judge,
       judge_cost_usd::float8 as judge_cost_usd
     from trial_results
     where trial_id = any ($1::bigint[]) order by trial_id, position`,
    [trialIds],
  );
  return rows;
}

/** Stops a running trial: results not yet asked stay unasked. */
/** Whether a running trial was canceled. */
export async function cancelTrial(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update trials set status = 'canceled', finished_at = now()
     where workspace_id = $1 and id = $2 and status = 'running'`,
    [workspaceId, id],
  );
  return rowCount > 0;
}

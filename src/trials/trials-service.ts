import { recordAudit } from '../audit/record-audit.js';
import {
  mergeAiSettings,
  namedProviders,
  toAiSettings,
  type AiSettings,
} from '../ai/ai-settings.js';
import type { Channel, ChannelsService } from '../channels/channels-service.js';
import type { Database, Queryable } from '../db/database.js';
import { notFound, invalidField } from '../platform/errors.js';
import {
  summarize,
  type CandidateOutcome,
  type SideSummary,
  type StoredOutcome,
} from './trial-outcomes.js';
import type { Condition } from '../conditions/condition-schemas.js';
import { TrialChecks, type CheckResult } from './trial-checks.js';
import type { JudgeVerdict } from './trial-judge.js';
import * as repo from './trials-repo.js';
import type { CreateTrial, TrialJudge } from './trials-schemas.js';

/** A side of a result, with its checks when the trial has checks. */
type Checked<Outcome> = Outcome & { checks?: CheckResult[] };

export interface TrialResult {
  event_id: string;
  current: Checked<StoredOutcome>;
  /** Null until the candidate has been asked on the event. */
  candidate: Checked<CandidateOutcome> | null;
  /** The judge's verdict, once asked: only on results whose two sides both replied. */
  judge?: JudgeVerdict;
}

/** A side of the summary, with the results whose checks all hold when the trial has checks. */
type SummarySide = SideSummary & { checks_passed?: number };

export interface TrialSummary {
  current: SummarySide;
  candidate: SummarySide;
  /** With a judge: how many results it gave to each side, and what asking it cost. */
  judge?: { current: number; candidate: number; tie: number };
  judge_cost_usd?: number | null;
}

export interface Trial {
  id: string;
  channel_id: string;
  status: 'running' | 'done' | 'canceled';
  total: number;
  done: number;
  /** What was given: members left out stay as the channel's current. */
  candidate: { template?: string; ai?: Partial<AiSettings> };
  /** The conditions applied to each side, when given. */
  checks?: Condition[];
  /** The model comparing the two replies of each result, when given. */
  judge?: TrialJudge;
  created_at: string;
  finished_at: string | null;
  summary: TrialSummary;
  results?: TrialResult[];
}

export interface TrialsOptions {
  /** Refuses provider names the workspace does not have (`unknown_provider`). */
  requireProviders: (db: Queryable, workspaceId: string, names: string[]) => Promise<void>;
  /** Refuses tool names the workspace does not have (`unknown_tool`). */
  requireTools: (db: Queryable, workspaceId: string, names: string[]) => Promise<void>;
}

/** How many of the channel's newest events are read at a time while looking for JSON payloads. */
const SCAN_PAGE = 200;

/** Trials of candidate prompts on a channel's real events; used by the API and the panel. */
export class TrialsService {
  constructor(
    private readonly db: Database,
    private readonly channels: ChannelsService,
    private readonly options: TrialsOptions,
  ) {}

  /**
   * Starts a trial: the candidate merged onto the channel as it is now, on the chosen events
   * whose payload is a complete JSON object, each with its stored outcome.
   */
  async create(workspaceId: string, channelId: string, input: CreateTrial): Promise<Trial> {
    const channel = await this.channels.get(workspaceId, channelId);
    const ai = mergeAiSettings(channel.ai, input.ai);
    const events =
      'last' in input.events
        ? await this.newestJsonEvents(workspaceId, channelId, input.events.last)
        : await this.chosenEvents(workspaceId, channelId, input.events.ids);
    if (events.length === 0) {
      throw invalidField('events', 'no chosen event has a payload that is a complete JSON object');
    }
    const candidate: repo.NewTrial['candidate'] = {};
    if (input.template !== undefined) candidate.template = input.template;
    if (input.ai !== undefined) candidate.ai = input.ai;
    const row = await this.db.transaction(async (tx) => {
      const judgeProvider = input.judge?.provider;
      await this.options.requireProviders(tx, workspaceId, [
        ...namedProviders(ai),
        ...(judgeProvider ? [judgeProvider] : []),
      ]);
      await this.options.requireTools(tx, workspaceId, ai.tools);
      const inserted = await repo.insertTrial(tx, {
        workspaceId,
        channelId,
        candidate,
        template: input.template ?? channel.template,
        ai,
        events,
        checks: input.checks,
        judge: input.judge,
      });
      await recordAudit(tx, {
        workspaceId,
        action: 'trial.create',
        target: { kind: 'trial', id: inserted.id },
        changes: { channel_id: channelId, candidate, events: events.length },
      });
      return inserted;
    });
    return this.get(workspaceId, row.id);
  }

  async get(workspaceId: string, id: string): Promise<Trial> {
    const row = await repo.findTrial(this.db, workspaceId, id);
    if (!row) throw notFound('This trial');
    const results = await repo.trialResults(this.db, [row.id]);
    return toTrial(row, results, true);
  }

  /** The channel's trials, newest first, without their results. */
  async list(workspaceId: string, channelId: string): Promise<Trial[]> {
    await this.channels.get(workspaceId, channelId);
    const rows = await repo.listTrials(this.db, workspaceId, channelId);
    const results = await repo.trialResults(
      this.db,
      rows.map((row) => row.id),
    );
    return rows.map((row) =>
      toTrial(
        row,
        results.filter((result) => result.trial_id === row.id),
        false,
      ),
    );
  }

  async cancel(workspaceId: string, id: string): Promise<Trial> {
    await this.db.transaction(async (tx) => {
      if (await repo.cancelTrial(tx, workspaceId, id))
        await recordAudit(tx, {
          workspaceId,
          action: 'trial.cancel',
          target: { kind: 'trial', id },
        });
    });
    return this.get(workspaceId, id);
  }

  /** Makes the trial's candidate, exactly as it was asked, the channel's next version. */
  async promote(workspaceId: string, id: string): Promise<Channel> {
    const row = await repo.findTrial(this.db, workspaceId, id);
    if (!row) throw notFound('This trial');
    return this.channels.replacePrompt(
      workspaceId,
      row.channel_id,
      row.template,
      toAiSettings(row.ai),
      {
        action: 'trial.promote',
        target: { kind: 'trial', id: row.id },
        changes: { channel_id: row.channel_id },
      },
    );
  }

  /** What the trial's Promote makes the channel's next version: its template and AI settings. */
  async promoted(workspaceId: string, id: string): Promise<{ template: string; ai: AiSettings }> {
    const row = await repo.findTrial(this.db, workspaceId, id);
    if (!row) throw notFound('This trial');
    return { template: row.template, ai: toAiSettings(row.ai) };
  }

  /** The start of each result's payload, by event id (for the trial page). */
  payloadExcerpts(workspaceId: string, trial: Trial, chars: number): Promise<Map<string, string>> {
    const ids = (trial.results ?? []).map((result) => result.event_id);
    return repo.payloadStarts(this.db, workspaceId, ids, chars);
  }

  /** The N newest events of the channel whose payload is a complete JSON object, newest first. */
  private async newestJsonEvents(
    workspaceId: string,
    channelId: string,
    count: number,
  ): Promise<repo.TrialEventRow[]> {
    const chosen: repo.TrialEventRow[] = [];
    let before: string | undefined;
    while (chosen.length < count) {
      const page = await repo.newestEvents(this.db, workspaceId, channelId, before, SCAN_PAGE);
      chosen.push(...page.filter(hasJsonObject).slice(0, count - chosen.length));
      if (page.length < SCAN_PAGE) break;
      before = page.at(-1)?.id;
    }
    return chosen;
  }

  /** The given events in the given order; any of another channel or unknown is a 400. */
  private async chosenEvents(
    workspaceId: string,
    channelId: string,
    ids: readonly string[],
  ): Promise<repo.TrialEventRow[]> {
    const rows = await repo.eventsByIds(this.db, workspaceId, ids);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const unknown = ids.filter((id) => byId.get(id)?.channel_id !== channelId);
    if (unknown.length) {
      throw invalidField('events.ids', `not events of this channel: ${unknown.join(', ')}`);
    }
    const unique = [...new Set(ids)];
    return unique.map((id) => byId.get(id) as repo.TrialEventRow).filter(hasJsonObject);
  }
}

/** A payload kept whole that parses as a JSON object. */
function hasJsonObject(event: repo.TrialEventRow): boolean {
  if (event.payload_truncated) return false;
  try {
    const value: unknown = JSON.parse(event.payload);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

function toTrial(
  row: repo.TrialRow,
  results: readonly repo.TrialResultRow[],
  withResults: boolean,
): Trial {
  const checks = row.checks ? new TrialChecks(row.checks) : undefined;
  const shown = results.map((result) => resultShown(result, checks));
  const asked = shown.flatMap((result) => (result.candidate ? [result.candidate] : []));
  const trial: Trial = {
    id: row.id,
    channel_id: row.channel_id,
    status: row.status,
    total: row.total,
    done: row.done,
    candidate: row.candidate as Trial['candidate'],
    ...(row.checks ? { checks: row.checks } : {}),
    ...(row.judge ? { judge: row.judge } : {}),
    created_at: new Date(row.created_at).toISOString(),
    finished_at: row.finished_at ? new Date(row.finished_at).toISOString() : null,
    summary: {
      current: sideSummary(
        shown.map((result) => result.current),
        checks,
      ),
      candidate: sideSummary(asked, checks),
      ...(row.judge ? judgeSummary(results) : {}),
    },
  };
  if (withResults) trial.results = shown;
  return trial;
}

/** A result as the API shows it: each side with its checks, the judge's verdict once asked. */
function resultShown(result: repo.TrialResultRow, checks: TrialChecks | undefined): TrialResult {
  const withChecks = <Outcome extends { status: string; reply: string | null }>(
    outcome: Outcome,
  ): Checked<Outcome> => (checks ? { ...outcome, checks: checks.of(outcome) } : outcome);
  return {
    event_id: result.event_id,
    current: withChecks(result.current),
    candidate: result.candidate ? withChecks(result.candidate) : null,
    ...(result.judge ? { judge: result.judge } : {}),
  };
}

function sideSummary(
  outcomes: readonly Checked<StoredOutcome | CandidateOutcome>[],
  checks: TrialChecks | undefined,
): SummarySide {
  const summary = summarize(outcomes);
  if (!checks) return summary;
  const passed = outcomes.filter((outcome) => outcome.checks?.every((check) => check.ok));
  return { ...summary, checks_passed: passed.length };
}

/** How many results the judge gave to each side, and what its calls cost together. */
function judgeSummary(
  results: readonly repo.TrialResultRow[],
): Pick<TrialSummary, 'judge' | 'judge_cost_usd'> {
  const judge = { current: 0, candidate: 0, tie: 0 };
  for (const { judge: verdict } of results) {
    if (verdict && 'winner' in verdict) judge[verdict.winner] += 1;
  }
  const costs = results.flatMap((r) => (r.judge_cost_usd === null ? [] : [r.judge_cost_usd]));
  return {
    judge,
    judge_cost_usd: costs.length ? costs.reduce((sum, cost) => sum + cost, 0) : null,
  };
}

import type { Database } from '../db/database.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { QueueLoop } from '../queue/queue-loop.js';
import type { QueueSettings } from '../queue/queue-settings.js';
import { priceUnknown, settleSpend } from '../spend/budget-gate.js';
import type { SpentCall } from '../spend/spend-ledger.js';
import { attemptRecord } from '../worker/ai-call.js';
import { countCalls } from '../worker/call-metrics.js';
import { ToolboxUnavailable, type Toolbox } from '../tools/toolbox.js';
import {
  askAttempt,
  prepareRequest,
  pricedTargets,
  type RequestDeps,
} from '../worker/event-request.js';
import { storableText } from '../worker/storable-text.js';
import type { AiCall } from '../ai/fallback-runner.js';
import type { CandidateOutcome } from './trial-outcomes.js';
import { askJudge } from './trial-judge.js';
import { claimTrialResults, type ClaimedTrialResult } from './queue-claim.js';
import { finishTrialResult, type JudgedOutcome } from './queue-finish.js';
import { releaseTrialResult } from './queue-release.js';
import { TRIALS_CHANNEL } from './trials-repo.js';

export interface TrialWorkerOptions extends RequestDeps, QueueSettings {
  db: Database;
  log: Logger;
  metrics: Metrics;
  /** The event worker's WORKER_CONCURRENCY: trials take a quarter of it (at least one). */
  workerConcurrency: number;
  workerId: string;
  recordSpend: (call: SpentCall) => Promise<void>;
}

/** The slots trials may hold: live events come first. */
export function trialSlots(workerConcurrency: number): number {
  return Math.max(1, Math.floor(workerConcurrency / 4));
}

/**
 * Asks trials' candidates on their events, on the queue loop the workers share, with a quarter of
 * the worker's slots. Each result is asked once (with its fallbacks): no event is changed,
 * nothing is delivered, no chat is used; the calls' spend is recorded without an event.
 */
export class TrialWorker {
  private readonly loop: QueueLoop<ClaimedTrialResult>;

  constructor(private readonly options: TrialWorkerOptions) {
    const { db, log, workerId } = options;
    this.loop = new QueueLoop<ClaimedTrialResult>({
      name: 'trial worker',
      items: 'trial results',
      workerId,
      db,
      channel: TRIALS_CHANNEL,
      log,
      concurrency: trialSlots(options.workerConcurrency),
      pollIntervalMs: options.pollIntervalMs,
      shutdownGraceMs: options.shutdownGraceMs,
      claim: (limit) => claimTrialResults(db, workerId, limit, options.leaseMs),
      release: (result) => releaseTrialResult(db, workerId, result),
      work: (result, signal) => this.ask(result, signal),
    });
  }

  runOnce(): Promise<number> {
    return this.loop.runOnce();
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async ask(result: ClaimedTrialResult, signal: AbortSignal): Promise<void> {
    const { db, log, workerId } = this.options;
    try {
      const outcome = await this.candidateOutcome(result, signal);
      const judged = outcome && (await this.judged(result, outcome, signal));
      if (outcome === undefined || judged === null) {
        await releaseTrialResult(db, workerId, result);
        return;
      }
      if (!(await finishTrialResult(db, workerId, result, outcome, judged))) {
        log.warn({ trialId: result.trial_id }, 'trial result taken over by another worker');
      }
    } catch (error) {
      log.error(
        { err: error, trialId: result.trial_id },
        'trial result not stored; it is asked again when its lease ends',
      );
    }
  }

  /**
   * The judge's verdict on the result when the trial has a judge and both sides replied
   * (undefined otherwise); null when cut short. Its calls are priced and counted as the
   * candidate's are.
   */
  private async judged(
    result: ClaimedTrialResult,
    outcome: CandidateOutcome,
    signal: AbortSignal,
  ): Promise<JudgedOutcome | undefined | null> {
    const { judge, current, payload } = result;
    if (!judge || payload === null || current.reply === null || outcome.reply === null) {
      return undefined;
    }
    if (current.status !== 'replied' || outcome.status !== 'replied') return undefined;
    let asked;
    try {
      asked = await askJudge(
        this.options,
        judge,
        {
          workspaceId: result.workspace_id,
          ai: result.ai,
          payload,
          current: current.reply,
          candidate: outcome.reply,
          budgeted: result.budgeted,
        },
        signal,
      );
    } catch (error) {
      if (signal.aborted) return null;
      throw error;
    }
    await this.settle(result, asked.calls);
    return { verdict: asked.verdict, costUsd: sumOfCosts(asked.calls) };
  }

  /** Records the spend of a trial's calls (no event's) and counts them in /metrics. */
  private async settle(result: ClaimedTrialResult, calls: AiCall[]): Promise<void> {
    const { log, metrics, recordSpend } = this.options;
    await settleSpend(recordSpend, log, { ...result, eventId: null }, calls);
    await countCalls(metrics, result.workspace_id, calls);
  }

  /** The candidate's outcome on the event, exactly as the worker would ask; undefined if cut short. */
  private async candidateOutcome(
    result: ClaimedTrialResult,
    signal: AbortSignal,
  ): Promise<CandidateOutcome | undefined> {
    const none = { prompt: null, reply: null, error: null, usage: null, cost_usd: null };
    if (result.payload === null) {
      return {
        ...none,
        status: 'failed',
        error: 'The event no longer exists.',
        latency_ms: null,
        missing: [],
      };
    }
    const prepared = await prepareRequest(this.options, {
      id: result.event_id,
      workspace_id: result.workspace_id,
      channel_id: result.channel_id,
      payload: result.payload,
      thread_key: result.thread_key,
      template: result.template,
      ai: result.ai,
    });
    if (prepared.kind === 'unreadable') {
      return { ...none, status: 'failed', error: prepared.error, latency_ms: null, missing: [] };
    }
    if (prepared.kind === 'skipped') {
      return {
        ...none,
        status: 'skipped',
        prompt: prepared.prompt,
        latency_ms: null,
        missing: prepared.missing,
      };
    }
    const targets = await pricedTargets(this.options, result.workspace_id, prepared.settings);
    const unpriced = result.budgeted ? priceUnknown(targets) : undefined;
    if (unpriced !== undefined) {
      const { prompt } = prepared.request;
      return {
        ...none,
        status: 'failed',
        prompt,
        error: unpriced,
        latency_ms: null,
        missing: prepared.missing,
      };
    }
    const { settings, guard } = prepared;
    let toolbox: Toolbox | undefined;
    if (settings.tools.length && this.options.openToolbox) {
      try {
        toolbox = await this.options.openToolbox(result.workspace_id, settings.tools);
      } catch (error) {
        if (!(error instanceof ToolboxUnavailable)) throw error;
        const { prompt } = prepared.request;
        const failed = { status: 'failed' as const, prompt, error: error.message };
        return { ...none, ...failed, latency_ms: null, missing: prepared.missing };
      }
    }
    let asked;
    try {
      // Tools run as the worker's would, on the event's id, but only those safe in trials.
      const tools = toolbox && {
        toolbox,
        guard,
        eventId: result.event_id,
        trial: true,
        metrics: this.options.metrics,
        maxRounds: settings.max_tool_rounds,
      };
      asked = await askAttempt(prepared, targets, signal, undefined, tools);
    } catch (error) {
      if (signal.aborted) return undefined;
      throw error;
    } finally {
      await toolbox?.close();
    }
    // A trial skips the tools that need an approval and stores no rounds: it always answers.
    if (asked.kind !== 'answered') throw new Error(`A trial's attempt ended ${asked.kind}.`);
    await this.settle(result, asked.result.calls);
    const call = attemptRecord(asked.result);
    return {
      status: asked.result.ok ? 'replied' : 'failed',
      prompt: prepared.request.prompt,
      reply: asked.reply ?? null,
      error: asked.result.ok ? null : storableText(asked.result.error.message),
      usage: call.usage,
      cost_usd: call.costUsd ?? null,
      latency_ms: call.latencyMs,
      missing: prepared.missing,
      // Only a candidate offering tools lists its calls (none for the others, as before).
      ...(toolbox ? { tool_calls: asked.toolCalls } : {}),
    };
  }
}

/** What the calls cost together; null when none has a known cost. */
function sumOfCosts(calls: readonly AiCall[]): number | null {
  const known = calls.flatMap((call) => (call.cost_usd === null ? [] : [call.cost_usd]));
  return known.length ? known.reduce((sum, cost) => sum + cost, 0) : null;
}

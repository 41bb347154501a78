import type { Metrics } from '../metrics/metrics.js';
import type { ModelToolCall, ToolResultMessage, ToolRound } from '../ai/tool-protocol.js';
import type { EventGuard } from '../guardrails/event-guard.js';
import { replySchemas } from '../reply-schema/checker-pool.js';
import type { Toolbox, ToolEntry } from '../tools/toolbox.js';
import { withToolSpan, type ChatParent } from '../tracing/tracing.js';

/** Calls of one round that are made; the model's further calls are refused. */
export const MAX_CALLS_PER_ROUND = 8;

/** Tool calls an event lists (its current outcome's last ones). */
export const TOOL_CALLS_KEPT = 50;

/** Characters of the result given to the model that a tool call's record keeps. */
const RECORDED_RESULT_CHARS = 2_048;

/** What the model is given for a call an operator denied (the note follows, when given). */
export const DENIED_BY_OPERATOR = 'denied by an operator';

/** What the model is given for a call nobody decided on within APPROVAL_TIMEOUT_S. */
export const APPROVAL_TIMED_OUT = 'approval timed out';

/** What the model is given for a tool that is not run in a trial. */
export const NOT_RUN_IN_TRIAL = '(not run in a trial)';

export type ToolCallStatus =
  'ok' | 'error' | 'refused' | 'denied' | 'skipped' | 'awaiting_approval';

/** One tool call as the event keeps it (`tool_calls`). */
export interface ToolCallRecord {
  round: number;
  /** The name the tool was offered (or asked for) under. */
  tool: string;
  /** As the model sent them (their text). */
  arguments: string;
  status: ToolCallStatus;
  http_status: number | null;
  latency_ms: number | null;
  /** The first 2,048 characters the model was given. */
  result: string;
}

/**
 * Where an attempt's tool use stands: the rounds so far (sent back to the model with each call)
 * and the calls' records. Plain JSON, so it can be stored and taken up again.
 */
export interface RoundsState {
  rounds: ToolRound[];
  toolCalls: ToolCallRecord[];
  /** The round that waits for an operator's decision on one of its calls. */
  pending?: PendingRound;
}

/** An operator's decision on a call (or the wait's timeout), kept for the current outcome. */
export interface ApprovalDecision {
  /** The name the tool was offered under. */
  tool: string;
  /** As the tool gets them (placeholders put back). */
  arguments: string;
  decision: 'approve' | 'deny';
  note: string | null;
  /** Denied because nobody decided in time. */
  timed_out?: boolean;
}

/** What happened to one call of a round (its result as the model is given it). */
interface CallDone {
  message: ToolResultMessage;
  record: ToolCallRecord;
}

/**
 * A round stopped at a call that needs an operator's approval: the calls done so far (their
 * results guarded and counted), and the call waiting. Plain JSON, stored while the event waits.
 */
export interface PendingRound {
  round: number;
  text: string | null;
  calls: ModelToolCall[];
  /** Per call, in the calls' order; null while it waits for (or is after) a decision. */
  done: (CallDone | null)[];
  /** The index of the call waiting. */
  waiting: number;
}

/** The call waiting for a decision, as the event shows it (`approval`). */
export interface WaitingCall {
  tool: string;
  /** As the tool would get them (placeholders put back). */
  arguments: string;
}

/** A round either ends, or stops at a call that needs an approval nobody has given yet. */
export type RoundOutcome =
  | { kind: 'done'; round: ToolRound; records: ToolCallRecord[] }
  | { kind: 'parked'; pending: PendingRound; waiting: WaitingCall; records: ToolCallRecord[] };

export interface RoundDeps {
  toolbox: Pick<Toolbox, 'entry' | 'call'>;
  guard: EventGuard | undefined;
  /** For the Idempotency-Key; a trial's calls use the event's id as the worker would. */
  eventId: string;
  /** A trial runs only the tools marked `safe_in_trials`. */
  trial: boolean;
  metrics: Metrics;
  chatParent?: ChatParent;
  signal: AbortSignal;
  /** The decisions made on approvals in the current outcome. */
  decisions?: readonly ApprovalDecision[];
}

/** A call checked and ready to be made. */
interface Ready {
  entry: ToolEntry;
  input: Record<string, unknown>;
  /** The arguments as the tool gets them. */
  restored: string;
}

/**
 * Makes the calls of one round that asked for tools (round `round`, counted from 1): at most
 * MAX_CALLS_PER_ROUND, each checked first. The calls that need no approval are made first,
 * concurrently; their results are guarded in the order of the calls (spotlighted, then redacted
 * continuing the event's numbering) once all are in, so the numbering does not depend on which
 * tool answered first. Then the calls that need an operator's approval, one at a time
 * (continueToolRound).
 */
export async function runToolRound(
  deps: RoundDeps,
  round: number,
  text: string,
  calls: readonly ModelToolCall[],
): Promise<RoundOutcome> {
  const done = await Promise.all(
    calls.map(async (call, index): Promise<CallDone | null> => {
      if (index >= MAX_CALLS_PER_ROUND) {
        return spanned(deps, call, async () =>
          refused(round, call, `Refused: at most ${MAX_CALLS_PER_ROUND} tool calls a round.`),
        );
      }
      const checked = await check(deps, round, call);
      if ('record' in checked) return spanned(deps, call, async () => checked);
      if (needsApproval(checked.entry)) return null;
      return spanned(deps, call, () => made(deps, round, call, checked));
    }),
  );
  const pending: PendingRound = {
    round,
    text: text || null,
    calls: [...calls],
    done: done.map((one) => (one ? guarded(deps, one) : null)),
    waiting: -1,
  };
  return continueToolRound(deps, pending);
}

/**
 * Goes on with a round's calls that need an approval, in their order: a call decided on in the
 * current outcome (the same tool and arguments) is made or denied; the first one not decided
 * stops the round (`parked`) until an operator decides. Each call is checked again first: the
 * tool may have been removed or changed while the event waited.
 */
export async function continueToolRound(
  deps: RoundDeps,
  pending: PendingRound,
): Promise<RoundOutcome> {
  const done = [...pending.done];
  for (const [index, call] of pending.calls.entries()) {
    if (done[index]) continue;
    const checked = await check(deps, pending.round, call);
    if ('record' in checked || !needsApproval(checked.entry)) {
      const one = await spanned(deps, call, async () =>
        'record' in checked ? checked : made(deps, pending.round, call, checked),
      );
      done[index] = guarded(deps, one);
      continue;
    }
    const decision = deps.decisions?.find(
      (made) => made.tool === call.name && made.arguments === checked.restored,
    );
    if (!decision) {
      const waiting = { ...pending, done, waiting: index };
      return {
        kind: 'parked',
        pending: waiting,
        waiting: { tool: call.name, arguments: checked.restored },
        records: [...recordsOf(done), awaiting(pending.round, call)],
      };
    }
    const one = await spanned(deps, call, () =>
      decision.decision === 'approve'
        ? made(deps, pending.round, call, checked)
        : Promise.resolve(denied(pending.round, call, decision)),
    );
    done[index] = guarded(deps, one);
  }
  const finished = done as CallDone[];
  return {
    kind: 'done',
    round: {
      text: pending.text,
      calls: [...pending.calls],
      results: finished.map((one) => one.message),
    },
    records: recordsOf(finished),
  };
}

/** The last TOOL_CALLS_KEPT of an attempt's records. */
export function keptToolCalls(records: readonly ToolCallRecord[]): ToolCallRecord[] {
  return records.slice(-TOOL_CALLS_KEPT);
}

function needsApproval(entry: ToolEntry): boolean {
  return entry.tool.approval === 'always';
}

/** One `execute_tool` span per call, made or not (a refusal or a denial marks it failed). */
async function spanned(
  deps: RoundDeps,
  call: ModelToolCall,
  make: () => Promise<CallDone>,
): Promise<CallDone> {
  const one = await withToolSpan(deps.chatParent, call.name, async () => {
    const callDone = await make();
    return { status: callDone.record.status, callDone };
  });
  return one.callDone;
}

/**
 * A call's result as the model is given it (a tool's answer is data from outside: guarded), its
 * record keeping the first characters of that, and the call counted.
 */
function guarded(deps: RoundDeps, { message, record }: CallDone): CallDone {
  const fromTool = record.status === 'ok' || record.status === 'error';
  const content = fromTool && deps.guard ? deps.guard.toolResult(message.content) : message.content;
  const offered = deps.toolbox.entry(record.tool) !== undefined;
  deps.metrics.toolCalls.inc({ tool: offered ? record.tool : 'other', status: record.status });
  return {
    message: { ...message, content },
    record: { ...record, result: content.slice(0, RECORDED_RESULT_CHARS) },
  };
}

function recordsOf(done: readonly (CallDone | null)[]): ToolCallRecord[] {
  return done.flatMap((one) => (one ? [one.record] : []));
}

/**
 * A call checked before anything is sent: refused when its tool is not offered or its arguments
 * do not fit the tool's input schema; skipped in a trial unless the tool is safe in trials (a
 * tool that needs an approval is never run in a trial: nobody is there to give it).
 */
async function check(
  deps: RoundDeps,
  round: number,
  call: ModelToolCall,
): Promise<CallDone | Ready> {
  const entry = deps.toolbox.entry(call.name);
  if (!entry) {
    return refused(round, call, `Refused: no tool named "${call.name}" is offered.`);
  }
  const restored = deps.guard ? deps.guard.toolArguments(call.argumentsText) : call.argumentsText;
  const input = objectOf(restored);
  if (!input) return refused(round, call, 'Refused: the arguments are not a JSON object.');
  const problem = await replySchemas.check(JSON.stringify(entry.offered.parameters), restored);
  if (problem) {
    const why = problem.replace(/^the reply\b/, 'the arguments');
    return refused(
      round,
      call,
      `Refused: the arguments do not fit the tool's input schema: ${why}`,
    );
  }
  if (deps.trial && (!entry.tool.safe_in_trials || needsApproval(entry))) {
    return ended(round, call, 'skipped', NOT_RUN_IN_TRIAL, null, null);
  }
  return { entry, input, restored };
}

/** What the model is given for a denied call: the reason, and the operator's note. */
function denied(round: number, call: ModelToolCall, decision: ApprovalDecision): CallDone {
  const why = decision.timed_out ? APPROVAL_TIMED_OUT : DENIED_BY_OPERATOR;
  const text = decision.note ? `${why}: ${decision.note}` : why;
  return ended(round, call, 'denied', text, null, null);
}

/** The record of the call waiting for a decision (nothing given to the model yet). */
function awaiting(round: number, call: ModelToolCall): ToolCallRecord {
  return ended(round, call, 'awaiting_approval', '', null, null).record;
}

/** The call itself: the Idempotency-Key reads the arguments as the model sent them. */
async function made(
  deps: RoundDeps,
  round: number,
  call: ModelToolCall,
  { entry, input }: Ready,
): Promise<CallDone> {
  const outcome = await deps.toolbox.call(
    entry,
    input,
    call.argumentsText,
    deps.eventId,
    deps.signal,
  );
  return ended(round, call, outcome.status, outcome.text, outcome.httpStatus, outcome.latencyMs);
}

function refused(round: number, call: ModelToolCall, why: string): CallDone {
  return ended(round, call, 'refused', why, null, null);
}

function ended(
  round: number,
  call: ModelToolCall,
  status: ToolCallStatus,
  content: string,
  httpStatus: number | null,
  latencyMs: number | null,
): CallDone {
  return {
    message: { id: call.id, content, isError: status !== 'ok' && status !== 'skipped' },
    record: {
      round,
      tool: call.name,
      arguments: call.argumentsText,
      status,
      http_status: httpStatus,
      latency_ms: latencyMs,
      result: content,
    },
  };
}

/** The arguments as an object, or undefined when they are not JSON of one. */
function objectOf(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

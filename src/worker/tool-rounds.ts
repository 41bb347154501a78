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

/**
 * What the model is given for a tool marked `approval: "always"`: until the service asks an
 * operator (the contract's Approvals), such a call is refused and nothing is sent.
 */
export const NEEDS_APPROVAL =
  "Refused: this tool needs an operator's approval, which this service does not ask for yet; it was not called.";

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
}

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
}

interface CallDone {
  message: ToolResultMessage;
  record: ToolCallRecord;
}

/**
 * Makes the calls of one round that asked for tools (round `round`, counted from 1): at most
 * MAX_CALLS_PER_ROUND, concurrently, each checked first. The results are guarded in the order
 * of the calls (spotlighted, then redacted continuing the event's numbering) once all are in,
 * so the numbering does not depend on which tool answered first.
 */
export async function runToolRound(
  deps: RoundDeps,
  round: number,
  text: string,
  calls: readonly ModelToolCall[],
): Promise<{ round: ToolRound; records: ToolCallRecord[] }> {
  const done = await Promise.all(
    calls.map((call, index) =>
      // One `execute_tool` span per call, made or not (a refusal marks it failed).
      withToolSpan(deps.chatParent, call.name, async () => {
        const callDone =
          index < MAX_CALLS_PER_ROUND
            ? await oneCall(deps, round, call)
            : refused(round, call, `Refused: at most ${MAX_CALLS_PER_ROUND} tool calls a round.`);
        return { status: callDone.record.status, callDone };
      }),
    ),
  ).then((spanned) => spanned.map((one) => one.callDone));
  const results: ToolResultMessage[] = [];
  const records: ToolCallRecord[] = [];
  for (const { message, record } of done) {
    const fromTool = record.status === 'ok' || record.status === 'error';
    const content =
      fromTool && deps.guard ? deps.guard.toolResult(message.content) : message.content;
    results.push({ ...message, content });
    records.push({ ...record, result: content.slice(0, RECORDED_RESULT_CHARS) });
    const offered = deps.toolbox.entry(record.tool) !== undefined;
    deps.metrics.toolCalls.inc({ tool: offered ? record.tool : 'other', status: record.status });
  }
  return { round: { text: text || null, calls: [...calls], results }, records };
}

/** The last TOOL_CALLS_KEPT of an attempt's records. */
export function keptToolCalls(records: readonly ToolCallRecord[]): ToolCallRecord[] {
  return records.slice(-TOOL_CALLS_KEPT);
}

async function oneCall(deps: RoundDeps, round: number, call: ModelToolCall): Promise<CallDone> {
  const entry = deps.toolbox.entry(call.name);
  if (!entry) {
    return refused(round, call, `Refused: no tool named "${call.name}" is offered.`);
  }
  const argumentsText = deps.guard
    ? deps.guard.toolArguments(call.argumentsText)
    : call.argumentsText;
  const input = objectOf(argumentsText);
  if (!input) return refused(round, call, 'Refused: the arguments are not a JSON object.');
  const problem = await replySchemas.check(JSON.stringify(entry.offered.parameters), argumentsText);
  if (problem) {
    const why = problem.replace(/^the reply\b/, 'the arguments');
    return refused(
      round,
      call,
      `Refused: the arguments do not fit the tool's input schema: ${why}`,
    );
  }
  if (entry.tool.approval === 'always') {
    // A person's approval is not asked for yet (docs/tools.md): such a tool is never called.
    return refused(round, call, NEEDS_APPROVAL);
  }
  if (deps.trial && !entry.tool.safe_in_trials) {
    return ended(round, call, 'skipped', NOT_RUN_IN_TRIAL, null, null);
  }
  return made(deps, round, call, entry, input);
}

/** The call itself: the Idempotency-Key reads the arguments as the model sent them. */
async function made(
  deps: RoundDeps,
  round: number,
  call: ModelToolCall,
  entry: ToolEntry,
  input: Record<string, unknown>,
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

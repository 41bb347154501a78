import type { ChatParent } from '../tracing/tracing.js';
import type { AiProvider, AiRequest } from '../ai/ai-provider.js';
import { asksForJson, toAiSettings, type AiSettings } from '../ai/ai-settings.js';
import type { Prices } from '../ai/call-cost.js';
import { callTargets, checkReply, type WorkspaceProviders } from '../ai/call-targets.js';
import {
  runWithFallbacks,
  type AiCall,
  type CallTarget,
  type FallbackResult,
} from '../ai/fallback-runner.js';
import type { OfferedTool } from '../ai/tool-protocol.js';
import type { Toolbox } from '../tools/toolbox.js';
import { fitToInputLimit } from '../ai/input-limit.js';
import type { Queryable } from '../db/database.js';
import { EventGuard } from '../guardrails/event-guard.js';
import { missingInTemplates, parsePayload, renderTemplate } from '../template/index.js';
import { imageSources, type ImageSource } from '../attachments/image-sources.js';
import type { ImageFetcher } from '../attachments/image-fetcher.js';
import { threadHistory, type ThreadTurn } from './queue-history.js';
import { storableText } from './storable-text.js';
import {
  continueToolRound,
  keptToolCalls,
  runToolRound,
  type RoundDeps,
  type RoundOutcome,
  type RoundsState,
  type ToolCallRecord,
  type WaitingCall,
} from './tool-rounds.js';

/**
 * What an event is asked with: the worker asks with the channel as it is now, a trial with its
 * candidate. Both go through this module, so a trial asks exactly as the worker would.
 */
export interface EventToAsk {
  id: string;
  workspace_id: string;
  channel_id: string;
  payload: string;
  thread_key: string | null;
  template: string;
  /** The AI settings as stored (see `toAiSettings`). */
  ai: unknown;
}

export interface RequestDeps {
  db: Queryable;
  /** The built-in provider `default`: the server's AI_* configuration. */
  provider: AiProvider;
  providers?: WorkspaceProviders;
  /** AI_MAX_INPUT_CHARS. */
  maxInputChars: number;
  /** AI_MODEL, for channels that name none. */
  defaultModel?: string;
  pricesFor: (workspaceId: string, kind: string) => Promise<Prices>;
  /** Fetches the images a channel's `ai.images` name (ATTACHMENT_*); without it none are sent. */
  imageFetcher?: ImageFetcher;
  /** The tools a channel names, opened for one attempt (ToolsService.openToolbox). */
  openToolbox?: (workspaceId: string, names: readonly string[]) => Promise<Toolbox>;
}

/** A rendered request, guarded and fitted to the input limit, ready to be asked. */
export interface ReadyRequest {
  kind: 'ready';
  request: AiRequest;
  settings: AiSettings;
  guard: EventGuard | undefined;
  missing: string[];
  /** Less than was rendered is sent (history turns dropped or text cut). */
  inputTruncated: boolean;
  /** The images the payload names at the channel's `ai.images` paths, to be fetched. */
  images: ImageSource[];
}

export type PreparedRequest =
  | ReadyRequest
  /** The prompt rendered empty: no call is made. */
  | { kind: 'skipped'; prompt: string; missing: string[] }
  /** The stored payload cannot be read. */
  | { kind: 'unreadable'; error: string };

/**
 * Renders the template (and system prompt) with the payload, adds the thread's history as it
 * stood before the event (the replied events received earlier), applies the guardrails and cuts
 * what is sent to the input limit.
 */
export async function prepareRequest(
  deps: RequestDeps,
  event: EventToAsk,
): Promise<PreparedRequest> {
  const settings = toAiSettings(event.ai);
  // Guardrails (src/guardrails/): values rendered between data tags, then what is sent redacted.
  const guard = EventGuard.of(settings);
  let request: AiRequest;
  let missing: string[];
  let images: ImageSource[];
  try {
    const payload = parsePayload(event.payload);
    images = imageSources(payload, settings.images);
    const system = settings.system_prompt ?? '';
    const wrap = guard?.wrapValue;
    request = {
      prompt: storableText(renderTemplate(event.template, payload, wrap)),
      system: system ? storableText(renderTemplate(system, payload, wrap)) : undefined,
      history: [],
      model: settings.model ?? undefined,
      temperature: settings.temperature ?? undefined,
      maxTokens: settings.max_tokens ?? undefined,
      responseFormat: settings.response_format ?? undefined,
      promptCache: settings.prompt_cache,
      cacheKey: `hp-${event.channel_id}`,
    };
    missing = missingInTemplates([event.template, system], payload);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      kind: 'unreadable',
      error: storableText(`The stored payload is not valid JSON: ${message}`),
    };
  }
  if ((guard ? guard.unwrapped(request.prompt) : request.prompt).trim() === '') {
    return { kind: 'skipped', prompt: request.prompt, missing };
  }

  let droppedTurns = 0;
  let thread: ThreadTurn[] = [];
  if (event.thread_key !== null && (settings.history ?? 0) > 0) {
    const room = deps.maxInputChars - (request.system?.length ?? 0) - request.prompt.length;
    const history = await threadHistory(
      deps.db,
      event.channel_id,
      event.thread_key,
      event.id,
      settings.history ?? 0,
      room,
    );
    request.history = thread = history.turns;
    droppedTurns = history.dropped;
  }
  if (guard) request = guard.guard(request, thread);
  const fitted = fitToInputLimit(request, deps.maxInputChars);
  return {
    kind: 'ready',
    request: fitted.request,
    settings,
    guard,
    missing,
    inputTruncated: fitted.truncated || droppedTurns > 0,
    images,
  };
}

/** The attempt's providers in order, each with how the workspace's calls through it are priced. */
export async function pricedTargets(
  deps: RequestDeps,
  workspaceId: string,
  settings: AiSettings,
): Promise<CallTarget[]> {
  const targets = await callTargets(deps, workspaceId, settings);
  return Promise.all(
    targets.map(async (target) =>
      target.instance
        ? { ...target, prices: await deps.pricesFor(workspaceId, target.instance.name) }
        : target,
    ),
  );
}

/** One attempt's answer, and the reply as the channel gets it (placeholders put back if asked). */
export interface AnsweredAttempt {
  kind: 'answered';
  /** The last round's answer; its `calls` are every model call of the attempt, oldest first. */
  result: FallbackResult;
  /** The reply text to store; undefined when the attempt gave no usable reply. */
  reply: string | undefined;
  /** The attempt's tool calls (the last TOOL_CALLS_KEPT), oldest first. */
  toolCalls: ToolCallRecord[];
}

/** `onRound` said the event was lost: no result may be stored; `calls` were made meanwhile. */
export interface LostAttempt {
  kind: 'lost';
  calls: AiCall[];
}

/**
 * An attempt stopped at a tool call that needs an operator's approval: the conversation so far
 * (to be stored and taken up again by continueAttempt), and the model calls made meanwhile.
 */
export interface ParkedAttempt {
  kind: 'parked';
  state: RoundsState & { pending: NonNullable<RoundsState['pending']> };
  waiting: WaitingCall;
  /** The model calls this part of the attempt made, oldest first (maybe none). */
  calls: AiCall[];
  /** The last of them answered (it asked for the tools); undefined when none was made. */
  last: FallbackResult | undefined;
  /** The tool calls so far, the waiting one last (the last TOOL_CALLS_KEPT). */
  toolCalls: ToolCallRecord[];
}

export type AskedAttempt = AnsweredAttempt | ParkedAttempt | LostAttempt;

/** What an attempt offers the model, and how its rounds are recorded. */
export interface AttemptTools extends Omit<RoundDeps, 'signal' | 'chatParent'> {
  toolbox: RoundDeps['toolbox'] & { offered(): OfferedTool[] };
  /** Rounds that may ask for tools before a last call with tools switched off. */
  maxRounds: number;
  /** Told after each round (to store it and renew the lease); false: the event was lost. */
  onRound?: (state: RoundsState) => Promise<boolean>;
}

/**
 * Asks the targets in order (fallbacks within the attempt), each reply checked against the
 * response format after the guardrails put back what they replaced. With tools, each answer
 * that asks for them is a round: its calls are made (runToolRound) and the model asked again
 * with the results, until an answer asks for none; after `maxRounds` such rounds, once more
 * with the tools switched off. Every round is a call of the attempt, fallbacks included.
 */
export async function askAttempt(
  ready: ReadyRequest,
  targets: CallTarget[],
  signal: AbortSignal,
  chatParent?: ChatParent,
  tools?: AttemptTools,
  resumed?: RoundsState,
): Promise<AskedAttempt> {
  const { request, guard } = ready;
  const restored = (text: string) =>
    guard ? guard.restore(text, asksForJson(request.responseFormat)) : text;
  const offered = tools?.toolbox.offered() ?? [];
  const state: RoundsState = resumed ?? { rounds: [], toolCalls: [] };
  const calls: AiCall[] = [];
  let last: FallbackResult | undefined;
  // A round that asked for tools has ended (its state stored), or stopped at an approval.
  const roundEnded = async (
    outcome: RoundOutcome,
  ): Promise<ParkedAttempt | LostAttempt | undefined> => {
    if (outcome.kind === 'parked') {
      const toolCalls = keptToolCalls([...state.toolCalls, ...outcome.records]);
      const pending = outcome.pending;
      return {
        kind: 'parked',
        state: { ...state, pending },
        waiting: outcome.waiting,
        calls,
        last,
        toolCalls,
      };
    }
    state.rounds.push(outcome.round);
    state.toolCalls.push(...outcome.records);
    delete state.pending;
    if (!tools?.onRound || (await tools.onRound(state))) return undefined;
    return { kind: 'lost', calls };
  };
  if (tools && state.pending) {
    const stop = await roundEnded(
      await continueToolRound({ ...tools, signal, chatParent }, state.pending),
    );
    if (stop) return stop;
  }
  for (;;) {
    const toolsOn = state.rounds.length < (tools?.maxRounds ?? 0);
    const asked = offered.length
      ? {
          ...request,
          toolUse: {
            tools: offered,
            choice: toolsOn ? 'auto' : 'none',
            rounds: state.rounds,
          } as const,
        }
      : request;
    const result = await runWithFallbacks(
      targets,
      asked,
      signal,
      (reply, target) =>
        reply.toolCalls?.length
          ? Promise.resolve(undefined)
          : checkReply({ ...reply, text: restored(reply.text) }, target, request.responseFormat),
      chatParent,
    );
    calls.push(...result.calls);
    last = result;
    const toolCalls = keptToolCalls(state.toolCalls);
    const whole = { ...result, calls };
    const asksForTools = result.ok && result.reply.toolCalls?.length;
    if (!tools || !result.ok || !asksForTools) {
      const reply = result.ok ? storableText(restored(result.reply.text)) : undefined;
      return { kind: 'answered', result: whole, reply, toolCalls };
    }
    const stop = await roundEnded(
      await runToolRound(
        { ...tools, signal, chatParent },
        state.rounds.length + 1,
        result.reply.text,
        result.reply.toolCalls ?? [],
      ),
    );
    if (stop) return stop;
  }
}

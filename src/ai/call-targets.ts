import { AiError, type AiProvider, type AiReply } from './ai-provider.js';
import { DEFAULT_PROVIDER, type AiSettings, type ResponseFormat } from './ai-settings.js';
import type { CallTarget } from './fallback-runner.js';
import { REPLY_INVALID, replyProblem } from './reply-check.js';

/** A workspace's own providers by name, as this process calls them. */
export type WorkspaceProviders = (workspaceId: string) => Promise<ReadonlyMap<string, AiProvider>>;

/**
 * The providers one attempt asks, in order: the channel's own, then its fallbacks. Each is asked
 * for its fallback's model, else the channel's, else AI_MODEL. The workspace's providers are
 * looked up only when the channel names one besides `default`.
 */
export async function callTargets(
  deps: { provider: AiProvider; providers?: WorkspaceProviders; defaultModel?: string },
  workspaceId: string,
  settings: AiSettings,
): Promise<CallTarget[]> {
  const channelModel = settings.model ?? deps.defaultModel;
  const named = [{ provider: settings.provider, model: channelModel }];
  for (const fallback of settings.fallbacks) {
    named.push({ provider: fallback.provider, model: fallback.model ?? channelModel });
  }
  const own = named.some((target) => target.provider !== DEFAULT_PROVIDER);
  const providers = own && deps.providers ? await deps.providers(workspaceId) : undefined;
  return named.map(({ provider, model }) => ({
    provider,
    model,
    instance: provider === DEFAULT_PROVIDER ? deps.provider : providers?.get(provider),
  }));
}

/**
 * A reply of the wrong shape is a failed call (`reply_invalid`): another answer may fit, unless
 * the provider always answers the same. Any exception while checking counts as one. The error
 * carries the refused text, as checked, for Brain Logs.
 */
export async function checkReply(
  reply: AiReply,
  target: CallTarget,
  format: ResponseFormat | undefined,
): Promise<AiError | undefined> {
  const problem = await replyProblem(reply.text, format).catch(
    (error: unknown) =>
      `the reply could not be checked: ${error instanceof Error ? error.message : String(error)}`,
  );
  if (problem === undefined) return undefined;
  return new AiError(
    `${REPLY_INVALID}: ${problem}`,
    !target.instance?.deterministic,
    undefined,
    { unanswered: false, httpStatus: 200 },
    reply.text,
  );
}

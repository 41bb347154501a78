import type { TokenUsage } from '../ai/ai-provider.js';
import { costOfCall, type Prices } from '../ai/call-cost.js';
import type { Logger } from '../platform/logger.js';
import type { SpentCall } from '../spend/spend-ledger.js';
import type { ClaimedEvent } from './queue-claim.js';

/** The name calls through the server's AI_* configuration are recorded under. */
export const DEFAULT_PROVIDER = 'default';

/** One call of a claimed event, as made. */
export interface EventCall {
  event: ClaimedEvent;
  prices: Prices;
  model: string | null;
  /** Null when the call gave no usage (it failed, or the provider reports none). */
  usage: TokenUsage | null;
}

/**
 * Costs one call of an event and records its spend. In a workspace with a budget the record is
 * waited for, before the call's slot takes the next one: so at most the calls in flight are
 * ever uncounted, and the budget is passed by no more than they cost. A record that cannot be
 * written is logged; the reply is not held back for it.
 * @returns the call's cost in USD, or null when unknown
 */
export async function spendOnCall(
  recordSpend: (call: SpentCall) => Promise<void>,
  log: Logger,
  { event, prices, model, usage }: EventCall,
): Promise<number | null> {
  const costUsd = costOfCall(prices, model, usage);
  const recorded = recordSpend({
    workspaceId: event.workspace_id,
    channelId: event.channel_id,
    eventId: event.id,
    provider: DEFAULT_PROVIDER,
    model,
    promptTokens: usage?.prompt_tokens ?? null,
    completionTokens: usage?.completion_tokens ?? null,
    costUsd,
  }).catch((error: unknown) =>
    log.error({ eventId: event.id, err: error }, 'spend of an AI call not recorded'),
  );
  if (event.budgeted) await recorded;
  return costUsd;
}

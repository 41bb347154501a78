import type { AiCall } from '../ai/fallback-runner.js';
import type { Logger } from '../platform/logger.js';
import type { SpentCall } from '../spend/spend-ledger.js';
import type { ClaimedEvent } from './queue-claim.js';

/**
 * Records the spend of each call of an attempt, under the provider and model it asked (its cost
 * is already on the call, see callRecord). In a workspace with a budget the records are waited
 * for, before the attempt's slot takes the next call: so at most the calls in flight are ever
 * uncounted, and the budget is passed by no more than they cost. A record that cannot be written
 * is logged; the reply is not held back for it.
 */
export async function spendOnCalls(
  recordSpend: (call: SpentCall) => Promise<void>,
  log: Logger,
  event: ClaimedEvent,
  calls: readonly AiCall[],
): Promise<void> {
  const recorded = calls.map((call) =>
    recordSpend({
      workspaceId: event.workspace_id,
      channelId: event.channel_id,
      eventId: event.id,
      provider: call.provider,
      model: call.model,
      promptTokens: call.usage?.prompt_tokens ?? null,
      completionTokens: call.usage?.completion_tokens ?? null,
      costUsd: call.cost_usd,
    }).catch((error: unknown) =>
      log.error({ eventId: event.id, err: error }, 'spend of an AI call not recorded'),
    ),
  );
  if (event.budgeted) await Promise.all(recorded);
}

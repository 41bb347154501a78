import type { AiCall } from '../ai/fallback-runner.js';
import type { Logger } from '../platform/logger.js';
import type { SpentCall } from '../spend/spend-ledger.js';

/** Whose calls they are: an event's, or a trial's (no event). */
export interface SpendingOn {
  workspace_id: string;
  channel_id: string;
  /** The event, or null for a trial's calls. */
  eventId: string | null;
  /** The workspace has a monthly budget: the records are waited for. */
  budgeted: boolean;
}

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
  on: SpendingOn,
  calls: readonly AiCall[],
): Promise<void> {
  const recorded = calls.map((call) =>
    recordSpend({
      workspaceId: on.workspace_id,
      channelId: on.channel_id,
      eventId: on.eventId,
      provider: call.provider,
      model: call.model,
      promptTokens: call.usage?.prompt_tokens ?? null,
      completionTokens: call.usage?.completion_tokens ?? null,
      costUsd: call.cost_usd,
    }).catch((error: unknown) =>
      log.error({ eventId: on.eventId, err: error }, 'spend of an AI call not recorded'),
    ),
  );
  if (on.budgeted) await Promise.all(recorded);
}

// What the store statement (store-event-batch.ts) answers for each request of a batch.

/** The event a duplicate is answered with, as it stands now. */
export interface FirstEvent {
  id: string;
  status: string;
  reply: string | null;
  error: string | null;
}

/** What a refusal for the quota names, read from the workspace row the statement locked. */
export interface QuotaState {
  chatQuota: number;
  /** The start of the next calendar month (UTC), when usage counts from 0 again. */
  resetsAt: Date;
}

/** What a refusal for the budget names, read from the workspace row the statement locked. */
export interface BudgetState {
  monthlyBudgetUsd: number;
  /** The start of the next calendar month (UTC), when the month's spend counts from 0 again. */
  resetsAt: Date;
}

/**
 * What became of one request of a batch. `rejected`: the pipeline's refusal, recorded.
 * `filtered`: stored finished, the payload not meeting the channel's `accept_when`.
 * `key_reused`: the key was accepted for another body (422), recorded as rejected.
 * `channel_changed`: the channel is no longer as the pipeline checked it (disabled, deleted or
 * given a new URL meanwhile); nothing was stored, and the pipeline checks the request again.
 */
export type StoredEvent =
  | { outcome: 'accepted' | 'rejected' | 'filtered'; eventId: string }
  | { outcome: 'quota_exceeded'; eventId: string; quota: QuotaState }
  | { outcome: 'budget_exceeded'; eventId: string; budget: BudgetState }
  | { outcome: 'key_reused'; eventId: string; firstId: string }
  | { outcome: 'duplicate'; first: FirstEvent }
  | { outcome: 'channel_changed' };

/** One result row of the statement, in the order of the batch's requests. */
export interface ResultRow {
  id: string | null;
  outcome: StoredEvent['outcome'];
  first_id: string | null;
  first_status: string;
  first_reply: string | null;
  first_error: string | null;
  chat_quota: number | null;
  monthly_budget_usd: number | null;
  resets_at: Date | string | null;
}

/** The outcome of one request, from its result row. */
export function storedEvent(row: ResultRow): StoredEvent {
  const { outcome } = row;
  switch (outcome) {
    case 'channel_changed':
      return { outcome };
    case 'duplicate': {
      const first = {
        id: row.first_id as string,
        status: row.first_status,
        reply: row.first_reply,
        error: row.first_error,
      };
      return { outcome, first };
    }
    case 'key_reused':
      return { outcome, eventId: row.id as string, firstId: row.first_id as string };
    case 'quota_exceeded': {
      const quota = { chatQuota: row.chat_quota ?? 0, resetsAt: new Date(row.resets_at ?? 0) };
      return { outcome, eventId: row.id as string, quota };
    }
    case 'budget_exceeded': {
      const budget = {
        monthlyBudgetUsd: row.monthly_budget_usd ?? 0,
        resetsAt: new Date(row.resets_at ?? 0),
      };
      return { outcome, eventId: row.id as string, budget };
    }
    default:
      return { outcome, eventId: row.id as string };
  }
}

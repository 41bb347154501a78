import { AppError } from '../errors.js';

/** The refusals of Brain Logs actions (replay), by the `code` they carry. */
export const eventErrors = {
  /** As the receiver's refusal: the same code and words, and when the quota starts again. */
  quotaExceeded: (workspace: { chat_quota: number; quota_resets_at: string }) =>
    new AppError(
      403,
      'quota_exceeded',
      'Chat quota used up',
      'The workspace has used its chat quota for this month.',
      {},
      { resets_at: workspace.quota_resets_at, chat_quota: workspace.chat_quota },
    ),
  unfinished: () =>
    new AppError(
      409,
      'event_unfinished',
      'Event not finished',
      'This event is still waiting for its reply; it can be replayed once it is finished.',
    ),
  notReplayable: () =>
    new AppError(
      409,
      'event_not_replayable',
      'Event cannot be replayed',
      'This refused request has no complete JSON object as its body, so there is nothing to render.',
    ),
};

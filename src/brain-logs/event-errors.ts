import { AppError } from '../platform/errors.js';

/** The refusals of Brain Logs actions (replay, live streams), by the `code` they carry. */
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
  /** STREAMS_PER_KEY: one key or session cannot hold the process's streams (and reads) alone. */
  tooManyStreams: (limit: number) =>
    new AppError(
      429,
      'too_many_streams',
      'Too many live streams',
      `This API key or session already holds ${limit} live streams, the most it may; ` +
        'close one before opening another.',
    ),
  notReplayable: () =>
    new AppError(
      409,
      'event_not_replayable',
      'Event cannot be replayed',
      'This event has no complete JSON object as its body (a refused request, or a body kept ' +
        'only to its first 64 KB), so there is nothing to render.',
    ),
};

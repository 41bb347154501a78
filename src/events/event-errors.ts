import { AppError } from '../errors.js';

/** The refusals of Brain Logs actions (replay), by the `code` they carry. */
export const eventErrors = {
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

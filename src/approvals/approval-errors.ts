import { AppError } from '../platform/errors.js';

/** The refusals of approvals, by the `code` they carry. */
export const approvalErrors = {
  notAwaiting: (status: string) =>
    new AppError(
      409,
      'not_awaiting_approval',
      'Event not awaiting approval',
      `This event is ${status}: only an event awaiting an approval can be approved or denied.`,
      {},
      { status },
    ),
};

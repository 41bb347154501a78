import { z } from 'zod';

/** `POST /api/v1/events/{id}/approval`'s body. */
export const approvalDecisionSchema = z
  .object({
    decision: z.enum(['approve', 'deny']),
    note: z.string().max(2_000).optional(),
  })
  .strict();

export type ApprovalDecisionInput = z.infer<typeof approvalDecisionSchema>;

import type { Router } from 'express';
import { idRouter } from '../platform/ids.js';
import { approvalDecisionSchema } from './approval-schemas.js';
import type { ApprovalsService } from './approvals-service.js';

/** `/api/v1/events/{id}/approval`: an operator's decision on the tool call an event waits with. */
export function approvalsRoutes(approvals: ApprovalsService): Router {
  const router = idRouter();

  router.post('/events/:eventId/approval', async (req, res) => {
    const body = approvalDecisionSchema.parse(req.body ?? {});
    res.json(await approvals.decide(res.locals.workspaceId, req.params.eventId, body));
  });

  return router;
}

import type { Database } from '../db/database.js';
import type { EventJson } from '../events/event-object.js';
import { AppError, notFound } from '../platform/errors.js';
import { decideApproval, type Decision } from '../worker/queue-decide-approval.js';
import { recordAudit, type AuditChanges } from '../audit/record-audit.js';
import { approvalErrors } from './approval-errors.js';
import { listExpiredApprovals, lockEventStatus } from './approvals-repo.js';

/** Reads an event as the API shows it (EventReader.get). */
type ReadEvent = (workspaceId: string, id: string) => Promise<EventJson>;

/** Events denied per statement by the timeout sweep. */
const EXPIRED_BATCH = 100;

/**
 * Approvals: an operator's decision on the tool call an event waits with, and the timeout that
 * denies it when nobody decides. Both go through `decide`, one transaction each.
 */
export class ApprovalsService {
  constructor(
    private readonly db: Database,
    private readonly readEvent: ReadEvent,
  ) {}

  /**
   * Approves or denies the call the event waits with, and puts the event back in the queue:
   * the worker takes the conversation up where it stopped (approved: the call is made; denied:
   * the model is told so, with the note).
   * @throws AppError 404 unknown event, 409 `not_awaiting_approval` when it does not wait.
   */
  async decide(
    workspaceId: string,
    eventId: string,
    decision: { decision: 'approve' | 'deny'; note?: string | null },
  ): Promise<EventJson> {
    await this.record(workspaceId, eventId, {
      decision: decision.decision,
      note: decision.note?.trim() || null,
      timedOut: false,
    });
    return this.readEvent(workspaceId, eventId);
  }

  /**
   * Denies every call whose wait has run out (APPROVAL_TIMEOUT_S), as `approval timed out`;
   * says how many. An event decided meanwhile is left as it is.
   */
  async denyExpired(): Promise<number> {
    const timedOut: Decision = { decision: 'deny', note: null, timedOut: true };
    let denied = 0;
    for (;;) {
      const expired = await listExpiredApprovals(this.db, EXPIRED_BATCH);
      for (const event of expired) {
        try {
          await this.record(event.workspace_id, event.id, timedOut);
          denied++;
        } catch (error) {
          if (!(error instanceof AppError) || error.status >= 500) throw error;
        }
      }
      if (expired.length < EXPIRED_BATCH) return denied;
    }
  }

  /**
   * The one place a decision is written: the event's row locked, checked and put back in the
   * queue with the decision, in one transaction. Whatever else is to record a decision (an audit
   * entry `event.approval`) is written here, in the same transaction.
   */
  private async record(workspaceId: string, eventId: string, decision: Decision): Promise<void> {
    await this.db.transaction(async (tx) => {
      const status = await lockEventStatus(tx, workspaceId, eventId);
      if (status === undefined) throw notFound('This event');
      if (status !== 'awaiting_approval') throw approvalErrors.notAwaiting(status);
      await decideApproval(tx, workspaceId, eventId, decision);
      // The timeout's decision is the system's: no request, so no admin, is behind it.
      await recordAudit(tx, {
        workspaceId,
        action: 'event.approval',
        target: { kind: 'event', id: eventId },
        changes: approvalChanges(decision),
      });
    });
  }
}

/** A decision as the audit log shows it: what was decided, with the note or the timeout. */
function approvalChanges({ decision, note, timedOut }: Decision): AuditChanges {
  const changes: AuditChanges = {
    status: { before: 'awaiting_approval', after: 'pending' },
    decision: { before: null, after: decision },
  };
  if (note) changes.note = { before: null, after: note };
  if (timedOut) changes.reason = { before: null, after: 'approval timed out' };
  return changes;
}

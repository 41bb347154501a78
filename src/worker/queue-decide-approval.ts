import type { Queryable } from '../db/database.js';

/** An operator's decision on the call an event waits with, or the wait's timeout. */
export interface Decision {
  decision: 'approve' | 'deny';
  note: string | null;
  timedOut: boolean;
}

/**
 * Puts an event that waits for an approval back in the queue, due at once, with the decision
 * added to those of its current outcome (the waiting call's tool and arguments, so the
 * conversation taken up, or an attempt retried from its first round, finds it). The attempt
 * the event parked in is given back: taking the conversation up counts it again, so an event
 * parked in its last attempt still goes on. Resolves to false when the event does not wait.
 */
export async function decideApproval(
  db: Queryable,
  workspaceId: string,
  eventId: string,
  decision: Decision,
): Promise<boolean> {
  const { rows } = await db.query(
    `update events set
       status = 'pending',
       run_at = now(),
       attempts = greatest(attempts - 1, 0),
       approval_decisions = approval_decisions || jsonb_build_array(jsonb_build_object(
         'tool', approval->'tool',
         'arguments', approval->'arguments',
         'decision', $3::text,
         'note', $4::text,
         'timed_out', $5::boolean)),
       approval = null,
       approval_expires_at = null
     where workspace_id = $1 and id = $2 and status = 'awaiting_approval'
     returning id`,
    [workspaceId, eventId, decision.decision, decision.note, decision.timedOut],
  );
  if (rows.length === 0) return false;
  // Wakes idle workers (migrations/0002's channel) instead of leaving the event to their poll.
  await db.query(`select pg_notify('hookprompt_events', '')`);
  return true;
}

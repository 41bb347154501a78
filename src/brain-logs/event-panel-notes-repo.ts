import type { Queryable } from '../db/database.js';

/**
 * What Brain Logs shows of an event beyond the API's event object, which keeps the contract's
 * shape: the detail a refused sender was answered with (migrations/0029; the API keeps the
 * refusal's code in `error`) and the answer a `reply_invalid` refused (migrations/0032).
 */
export interface EventPanelNotes {
  refusalDetail: string | null;
  rejectedReply: string | null;
}

export async function eventPanelNotes(
  db: Queryable,
  workspaceId: string,
  eventId: string,
): Promise<EventPanelNotes> {
  const { rows } = await db.query<{
    refusal_detail: string | null;
    rejected_reply: string | null;
  }>('select refusal_detail, rejected_reply from events where id = $1 and workspace_id = $2', [
    eventId,
    workspaceId,
  ]);
  return {
    refusalDetail: rows[0]?.refusal_detail ?? null,
    rejectedReply: rows[0]?.rejected_reply ?? null,
  };
}

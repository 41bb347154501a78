import type { Queryable } from '../db/database.js';

const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** The event's status and body, its row locked until the transaction ends. */
export async function lockEvent(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<{ status: string; payload: string; payload_truncated: boolean } | undefined> {
  const { rows } = await db.query<{ status: string; payload: string; payload_truncated: boolean }>(
    `select status, payload, payload_truncated from events
     where workspace_id = $1 and id = $2 for update`,
    [workspaceId, id],
  );
  return rows[0];
}

/**
 * Puts finished events back in the queue as if just received: the worker renders them again
 * with the channel's template as it is now. The outcome they had is appended to `history`,
 * which keeps the last 20, long texts cut (events_history_kept, migrations/0017).
 * A refused answer (`rejected_reply`) is dropped, not kept in `history`: it is for reading the
 * current outcome only. The status is checked again on the locked rows, so an event a concurrent
 * replay already took is left alone; returns the ids replayed.
 */
export async function requeueEvents(
  db: Queryable,
  workspaceId: string,
  ids: readonly string[],
  finished: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `update events set
       history = events_history_kept(history || jsonb_build_array(jsonb_build_object(
         'status', status,
         'prompt', prompt,
         'reply', reply,
         'error', error,
         'attempts', attempts,
         'completed_at', to_char(completed_at at time zone 'UTC', ${ISO_MS}),
         'provider', provider,
         'model', model,
         'usage', usage,
         'cost_usd', cost_usd,
         'calls', calls,
         'tool_calls', tool_calls,
         'input_truncated', input_truncated,
         'cached_from', cached_from,
         'replayed_at', to_char(now() at time zone 'UTC', ${ISO_MS})))),
       status = 'pending',
       prompt = null, reply = null, error = null, attempts = 0, completed_at = null,
       provider = null, model = null, usage = null, calls = '[]', cost_usd = null, tool_calls = '[]',
       attachments = '[]',
       input_truncated = false, redactions = null, redaction_values = null, rejected_reply = null,
       request_hash = null, reply_unrestored = null, cached_from = null,
       approval_decisions = '[]',
       run_at = now(), locked_by = null, locked_until = null
     where workspace_id = $1 and id = any($2::bigint[]) and status = any($3::text[])
     returning id`,
    [workspaceId, ids, finished],
  );
  return rows.map((row) => row.id);
}

import type { Queryable } from '../db/database.js';
import { CALLS_COST, KEEP_CALLS, callParams, type AiCallRecord } from './ai-call.js';
import type { ParkedConversation } from './parked-conversation.js';
import type { ToolCallRecord, WaitingCall } from './tool-rounds.js';

const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** What an attempt stopped at an approval leaves on its event. */
export interface Parking {
  eventId: string;
  waiting: WaitingCall;
  conversation: ParkedConversation;
  /** The tool calls so far, the waiting one last. */
  toolCalls: readonly ToolCallRecord[];
  /** The model calls made since the attempt started or was taken up (none: undefined). */
  call?: AiCallRecord;
  redactions: Record<string, number> | null;
  redactionValues: Record<string, string> | null;
  /** APPROVAL_TIMEOUT_S. */
  timeoutS: number;
}

/**
 * Parks an event whose model asked for a tool that needs an operator's approval: out of the
 * queue (`awaiting_approval` has no due time, so no worker takes it), its lease cleared, the
 * conversation stored to be taken up again, and the calls made so far added to its calls and
 * cost (they were made and billed whatever the decision). `approval` is what the event shows;
 * the wait ends at `approval_expires_at`. Only the lease's owner may park; resolves to false
 * when the event was lost.
 */
export async function parkEvent(db: Queryable, workerId: string, park: Parking): Promise<boolean> {
  const { rows } = await db.query(
    `update events set
       status = 'awaiting_approval',
       approval = jsonb_build_object(
         'tool', $3::text,
         'arguments', $4::text,
         'requested_at', to_char(now() at time zone 'UTC', ${ISO_MS}),
         'expires_at', to_char((now() + $5::integer * interval '1 second') at time zone 'UTC', ${ISO_MS})),
       approval_expires_at = now() + $5::integer * interval '1 second',
       conversation = $6::jsonb,
       tool_calls = $7::jsonb,
       redactions = coalesce($8::jsonb, redactions),
       redaction_values = coalesce($9::jsonb, redaction_values),
       usage = coalesce($10::jsonb, usage),
       latency_ms = coalesce($11, latency_ms),
       cost_usd = ${CALLS_COST('$15::jsonb', '$12::numeric')},
       provider = coalesce($13, provider),
       model = case when $13::text is null then model else $14 end,
       calls = ${KEEP_CALLS('$15::jsonb')},
       locked_by = null,
       locked_until = null
     where id = $1 and locked_by = $2 and status = 'processing'
     returning id`,
    [
      park.eventId,
      workerId,
      park.waiting.tool,
      park.waiting.arguments,
      park.timeoutS,
      JSON.stringify(park.conversation),
      JSON.stringify(park.toolCalls),
      park.redactions ? JSON.stringify(park.redactions) : null,
      park.redactionValues ? JSON.stringify(park.redactionValues) : null,
      ...callParams(park.call),
    ],
  );
  return rows.length === 1;
}

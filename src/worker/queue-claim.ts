import type { Queryable } from '../db/database.js';
import { sqlStatusList, QUEUED_STATUSES } from '../events/event-states.js';
import { overBudget } from '../spend/budget-sql.js';
import type { ParkedConversation } from './parked-conversation.js';
import type { ApprovalDecision } from './tool-rounds.js';

/** An event reserved for one worker, with what it needs to be answered. */
export interface ClaimedEvent {
  id: string;
  workspace_id: string;
  payload: string;
  /** AI calls made so far (by any worker). */
  attempts: number;
  /** The last error, kept from an earlier attempt. */
  error: string | null;
  channel_id: string;
  /** The thread the event belongs to (rendered when it arrived), or null. */
  thread_key: string | null;
  /** The channel's template as it is now, not as it was when the event arrived. */
  template: string;
  /** The channel's AI settings as they are now (see `toAiSettings`). */
  ai: unknown;
  /** The workspace has a monthly budget: each call's spend is counted before the next starts. */
  budgeted: boolean;
  /** The `webhook receive` span the event's processing continues (src/tracing/), or null. */
  traceparent: string | null;
  /** The conversation an approval stopped, to be taken up where it stopped; null otherwise. */
  conversation: ParkedConversation | null;
  /** The decisions made on approvals in the current outcome. */
  approval_decisions: ApprovalDecision[];
}

const UNFINISHED = sqlStatusList(QUEUED_STATUSES);

/** The statement of claimEvents, built once: a template literal would be a new string per call. */
const CLAIM_EVENTS = `with recursive active(channel_id) as (
    (select channel_id from events where status in ${UNFINISHED} order by channel_id limit 1)
    union all
    select (select e.channel_id from events e
            where e.status in ${UNFINISHED} and e.channel_id > active.channel_id
            order by e.channel_id limit 1)
    from active where active.channel_id is not null
  ),
  offered as (
    select c.id, c.workspace_id, c.channel_id, c.due_at,
           row_number() over (partition by c.channel_id order by c.due_at, c.id) as channel_turn
    from active
    -- A workspace that has spent its budget is passed over: its events wait as they are.
    join channels on channels.id = active.channel_id
    join workspaces on workspaces.id = channels.workspace_id and not ${overBudget('workspaces')}
    cross join lateral (
      select e.id, e.workspace_id, e.channel_id, e.due_at from events e
      where e.channel_id = active.channel_id
        and e.status in ${UNFINISHED} and e.due_at <= now()
        and (e.thread_key is null or not exists (
          select 1 from events t
          where t.channel_id = e.channel_id and t.thread_key = e.thread_key
            and t.status in ${UNFINISHED} and t.id <> e.id
            and (t.id < e.id or (t.status = 'processing' and t.due_at > now()))
        ))
      order by e.due_at, e.id
      limit $2
    ) as c
  ),
  turns as (
    select offered.id, offered.workspace_id, offered.due_at,
           row_number() over (
             partition by offered.workspace_id
             order by channel_turn, offered.channel_id <= coalesce(served.channel_id, 0),
                      offered.channel_id, offered.due_at, offered.id
           ) as workspace_turn
    from offered
    left join unnest($5::bigint[], $6::bigint[]) as served(workspace_id, channel_id)
      on served.workspace_id = offered.workspace_id
  ),
  next as (
    select events.id from turns join events on events.id = turns.id
    where events.id = any (array(select id from turns))
      and events.status in ${UNFINISHED} and events.due_at <= now()
    order by turns.workspace_turn, turns.workspace_id <= $4::bigint, turns.workspace_id,
             turns.due_at, turns.id
    limit $2
    for update of events skip locked
  )
  update events set
    status = 'processing',
    -- the event is rendered with the channel as it is now: its outcome is of this version
    version = channels.version,
    locked_by = $1,
    locked_until = now() + $3::integer * interval '1 millisecond'
  from next, channels, workspaces
  where events.id = next.id and channels.id = events.channel_id
    and workspaces.id = events.workspace_id
  returning events.id, events.workspace_id, events.payload, events.attempts, events.error, events.channel_id,
    events.thread_key, events.traceparent, events.conversation, events.approval_decisions,
    channels.template, channels.ai,
    workspaces.monthly_budget_usd is not null as budgeted`;

/**
 * Reserves up to `limit` due events for `workerId` until `leaseMs` from now, in one statement
 * that commits before any AI call is made: no transaction and no row lock outlives it.
 *
 * - Fair turns, not strictly oldest first: one workspace's backlog must not starve another's.
 *   `active` walks events_queue_channel_idx from channel to channel (a loose index scan: one
 *   probe per channel with unfinished events, however many events each has); each channel
 *   offers its `limit` oldest due events; they are dealt out round-robin, first across the
 *   channels of a workspace (`channel_turn`), then across workspaces (`workspace_turn`), and
 *   the turns are taken in order. Within one turn the workspaces (and channels) take turns
 *   starting after the ones this worker served last (`after`), not oldest first: a worker
 *   whose slots free up one at a time claims one event at a time, and the oldest event would
 *   otherwise always be the backlog's. So a workspace with one event waiting next to one with
 *   thousands gets its event into the next claim.
 * - Threads: an event whose `thread_key` is set is offered only when no other unfinished event
 *   of its thread is earlier (a smaller id) or in flight (processing with a live lease). So the
 *   events of one thread are answered one at a time, in the order they were received, with no
 *   lock held across the AI call and no busy loop: a blocked event is simply not offered, and
 *   other threads and channels go ahead. The check reads the statement's snapshot; a claim
 *   racing another sees the earlier event as still pending and leaves its successor alone.
 *   Ids are drawn when events are stored, so an event committed a moment later may carry a
 *   smaller id than one already taken: the "in flight" half of the condition keeps that one
 *   waiting too, and the lease bound keeps a dead worker's event from blocking its thread.
 * - `for update skip locked` locks the chosen rows for the few microseconds of this statement
 *   and makes concurrent claims (other processes, other workers) skip them instead of waiting,
 *   so no two claims return the same event. PostgreSQL re-checks the outer where clause on the
 *   newest row version after locking, so a row another worker changed in the meantime is not
 *   taken on the strength of the old version.
 * - `next` reads the dealt-out events again to lock them, by their ids as an array: joined to
 *   `turns` alone, whose size the planner guesses from the channel walk, PostgreSQL read the
 *   whole events table instead of a few index entries (bench/HISTORY.md).
 * - `due_at` is generated by the database (migrations/0005): a pending event's `run_at`, a
 *   processing event's `locked_until`. One condition, `due_at <= now()`, therefore finds both
 *   pending events that are due and processing events whose worker died or hung past its
 *   lease.
 * - `locked_by` names the claiming worker; every later statement on the event checks it, so a
 *   worker that lost its lease to another cannot overwrite the other's result.
 * - Budgets: the channels of a workspace whose month's spend has reached its budget offer no
 *   events (two key lookups per channel walked), so they stay `pending`, never `failed`, and
 *   are offered again once the budget is raised (which wakes the workers, migrations/0022) or the
 *   month turns (the next poll).
 * - The channel's template and AI settings are read in the same statement: the reply follows
 *   them as they are when the event is processed.
 * - Planned for each call, as startAttempts, finishEvents and markDelivered (deliveries) are,
 *   not prepared under a name: a generic plan made while the queue was short reads the whole
 *   backlog once one builds up, so the worker would slow down as its backlog grows
 *   (bench/HISTORY.md, "The worker's cached plans").
 */
export async function claimEvents(
  db: Queryable,
  workerId: string,
  limit: number,
  leaseMs: number,
  after: ClaimRotation = NO_ROTATION,
): Promise<ClaimedEvent[]> {
  const { rows } = await db.query<ClaimedEvent>(CLAIM_EVENTS, [
    workerId,
    limit,
    leaseMs,
    after.workspaceId,
    [...after.channels.keys()],
    [...after.channels.values()],
  ]);
  return rows;
}

/**
 * Where a worker's next claim starts its turns: after the workspace it served last, and in each
 * workspace after the channel it served last there.
 */
export interface ClaimRotation {
  workspaceId: string;
  /** Last channel served, by workspace id. */
  channels: ReadonlyMap<string, string>;
}

export const NO_ROTATION: ClaimRotation = { workspaceId: '0', channels: new Map() };

/** Workspaces remembered per worker; the least recently served are forgotten first. */
const ROTATION_MEMORY = 1000;

/**
 * The rotation after a claim: the last workspace, and per workspace the last channel, in the
 * claim's own turn order (ids after the previous ones first, then from the lowest again).
 */
export function nextRotation(
  after: ClaimRotation,
  claimed: readonly ClaimedEvent[],
): ClaimRotation {
  if (claimed.length === 0) return after;
  const channels = new Map(after.channels);
  const byWorkspace = new Map<string, string[]>();
  for (const event of claimed) {
    const list = byWorkspace.get(event.workspace_id) ?? [];
    list.push(event.channel_id);
    byWorkspace.set(event.workspace_id, list);
  }
  for (const [workspaceId, channelIds] of byWorkspace) {
    const last = lastInTurn(channels.get(workspaceId) ?? '0', channelIds);
    channels.delete(workspaceId);
    channels.set(workspaceId, last);
  }
  while (channels.size > ROTATION_MEMORY) channels.delete(channels.keys().next().value as string);
  return { workspaceId: lastInTurn(after.workspaceId, [...byWorkspace.keys()]), channels };
}

function lastInTurn(previous: string, ids: string[]): string {
  const start = BigInt(previous);
  const key = (id: string) => {
    const value = BigInt(id);
    // Ids after the previous one come first in the turn, then the ones from the lowest again.
    return value > start ? value : value + (1n << 62n);
  };
  return ids.reduce((last, id) => (key(id) > key(last) ? id : last));
}

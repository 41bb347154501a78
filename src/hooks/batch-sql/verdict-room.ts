import { CURRENT_MONTH_START } from '../../db/sql.js';
import { overBudget } from '../../spend/budget-sql.js';

/**
 * The workspace rows are locked in id order, so concurrent batches cannot deadlock; the room and
 * the budget are read from the locked rows, so no instance accepts past the quota, nor while the
 * month's spend has reached the budget.
 */
export const ROOM = `room as (
    select id, chat_quota,
           chat_quota - (case when quota_period_start < ${CURRENT_MONTH_START} then 0 else chats_used end)
             as room,
           ${overBudget('workspaces')} as over_budget,
           monthly_budget_usd::float8 as monthly_budget_usd
    from workspaces
    where id in (select workspace_id from channel_checked
                 where refusal is null and not channel_changed and filtered_by is null)
    order by id
    for update
  )`;

/**
 * Workspaces that may not take every request of the batch (too little of the quota left, or the
 * budget used up): their keys are looked up whatever the KeyCheck, so that a repeat of an
 * accepted request is its duplicate there too, never a 403.
 */
export const SHORT_OF_ROOM = `short_of_room as (
    select room.id from room
    where room.over_budget
       or room.room < (select count(*) from channel_checked
                       where channel_checked.workspace_id = room.id)
  )`;

/**
 * Past the workspace's room, counting in the batch's order only the requests that reach this
 * verdict: what an earlier verdict decided uses none of the quota.
 */
export const QUOTA_EXCEEDED = `when row_number() over (partition by channel_checked.workspace_id,
                                       not channel_changed and refusal is null
                                       and key_holders.open is not true and key_use is null
                                       and filtered_by is null
                                     order by channel_checked.position)
                  > coalesce(room.room, 0)
               then 'quota_exceeded'`;

/** The month's spend has reached the workspace's budget: after the quota. */
export const BUDGET_EXCEEDED = `when room.over_budget then 'budget_exceeded'`;

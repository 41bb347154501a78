import { REPLY_OUTCOMES, sqlStatusList } from '../events/event-states.js';
import { spentThisMonth } from '../spend/budget-sql.js';

// What each condition measures, as SQL over one alert row `a` (and its workspace `w`): one arm
// per condition type (two for those with an optional channel), each yielding `value` and
// `firing`. An arm's outer filter on the alert's type is a one-time filter: only the alert's own
// arm reads anything. Channel-scoped arms go through the channel's indexes, workspace-wide ones
// through the workspace's.

const TYPE = `a.condition->>'type'`;
const CHANNEL = `(a.condition->>'channel_id')::bigint`;
const WINDOW = `now() - make_interval(secs => (a.condition->>'window_s')::float8)`;

/** An arm for one type; `having` keeps the aggregate's one row only for the alert's own type. */
function arm(type: string, scoped: 'channel' | 'workspace' | 'any', select: string, from: string) {
  const scope =
    scoped === 'any'
      ? ''
      : ` and a.condition->>'channel_id' is ${scoped === 'channel' ? 'not ' : ''}null`;
  const only = `${TYPE} = '${type}'${scope}`;
  return `select ${select} from ${from.replace('$only', only)} having ${only}`;
}

/** Failed ÷ ended by the worker (replied, skipped, failed), among events received in the window. */
function failureRate(scoped: 'channel' | 'workspace'): string {
  const rate = `(count(*) filter (where e.status = 'failed'))::float8 / nullif(count(*), 0)`;
  const key = scoped === 'channel' ? `e.channel_id = ${CHANNEL}` : 'true';
  return arm(
    'failure_rate',
    scoped,
    `coalesce(${rate}, 0) as value,
     count(*) >= (a.condition->>'min_events')::int
       and coalesce(${rate}, 0) >= (a.condition->>'threshold')::float8 as firing`,
    `events e where $only and e.workspace_id = a.workspace_id and ${key}
       and e.received_at > ${WINDOW} and e.status in ${sqlStatusList(REPLY_OUTCOMES)}`,
  );
}

/** Requests refused (`rejected` events) received in the window. */
function rejections(scoped: 'channel' | 'workspace'): string {
  const key = scoped === 'channel' ? `e.channel_id = ${CHANNEL}` : 'true';
  return arm(
    'rejections',
    scoped,
    `count(*)::float8 as value, count(*) >= (a.condition->>'count')::int as firing`,
    `events e where $only and e.workspace_id = a.workspace_id and ${key}
       and e.received_at > ${WINDOW} and e.status = 'rejected'`,
  );
}

/**
 * Events waiting for an operator's approval of a tool call, however long they have waited
 * (migration 0057's partial index holds only those): firing while one waits.
 */
function approvalWaiting(scoped: 'channel' | 'workspace'): string {
  const key = scoped === 'channel' ? `e.channel_id = ${CHANNEL}` : 'true';
  return arm(
    'approval_waiting',
    scoped,
    `count(*)::float8 as value, count(*) > 0 as firing`,
    `events e where $only and e.workspace_id = a.workspace_id and ${key}
       and e.status = 'awaiting_approval'`,
  );
}

const AFTER_ATTEMPTS = `(a.condition->>'after_attempts')::int`;

/**
 * Whether the destination row `t` is a target a delivery_failed rule reads, each on its own: the
 * channel's reply URL while it has one, and each enabled destination of its list. Deleted and
 * disabled ones drop out, their last failure with them: no message of theirs could clear it.
 */
const IS_TARGET = `case t.role when 'reply_url' then t.url is not null else t.enabled end`;

/** The target `t`'s messages among the deliveries `d`: the reply URL's carry no destination id. */
const OF_TARGET = `d.channel_id = t.channel_id
  and (case t.role when 'reply_url' then d.destination_id is null else d.destination_id = t.id end)`;

/**
 * The target's newest settled message (delivered or failed) as `id` and whether it `failed`;
 * one still retried tells nothing. A one-time filter on `t.role` picks the branch, each reading
 * migration 0053's index at its target.
 */
const NEWEST_SETTLED = `(
  (select d.id, d.state = 'failed' as failed from deliveries d
   where t.role = 'reply_url' and d.channel_id = t.channel_id and d.destination_id is null
     and d.state in ('delivered', 'failed')
   order by d.id desc limit 1)
  union all
  (select d.id, d.state = 'failed' as failed from deliveries d
   where t.role <> 'reply_url' and d.channel_id = t.channel_id and d.destination_id = t.id
     and d.state in ('delivered', 'failed')
   order by d.id desc limit 1)
)`;

/**
 * With `after_attempts` (`after`, SQL; null without), the target's newest message still retried
 * after that many failed attempts of its round, as `id` (null when none). It reads the small
 * partial index of migration 0042.
 */
const newestRetried = (after: string) => `(select max(d.id) as id from deliveries d
  where ${after} is not null and ${OF_TARGET}
    and d.state in ('pending', 'sending') and d.attempts > d.round_start
    and d.attempts - d.round_start >= ${after})`;

/**
 * How many of the targets of the channels `c` are failing: those whose newest message that
 * tells the rule anything failed — the newest settled one `e`, unless a later one `r` is still
 * retried after `after_attempts` (`after`). A target that works does not hide one that fails.
 */
function failingTargets(channels: string, after: string): string {
  return `(select count(*) filter (
      where case when r.id > coalesce(e.id, 0) then true else coalesce(e.failed, false) end
    )::float8
    from channels c
    join destinations t on t.channel_id = c.id and ${IS_TARGET}
    left join lateral ${NEWEST_SETTLED} e on true
    left join lateral ${newestRetried(after)} r on true
    where ${channels})`;
}

/**
 * The number of the scope's targets whose newest settled message failed (`value`), firing while
 * there is one. Workspace-wide rules read FAILING_TARGETS, counted once per evaluation for every
 * workspace (and `after_attempts`) that has one.
 */
function deliveryFailed(scoped: 'channel' | 'workspace'): string {
  const only = `${TYPE} = 'delivery_failed' and a.condition->>'channel_id' is ${scoped === 'channel' ? 'not ' : ''}null`;
  const failing =
    scoped === 'channel'
      ? failingTargets(
          `c.id = ${CHANNEL} and c.workspace_id = a.workspace_id and c.deleted_at is null`,
          AFTER_ATTEMPTS,
        )
      : `(select l.failing from failing_targets l
          where l.workspace_id = a.workspace_id and l.after_attempts is not distinct from ${AFTER_ATTEMPTS})`;
  return `select coalesce(failing, 0) as value, coalesce(failing, 0) > 0 as firing
   from (select ${failing} as failing where ${only}) counted`;
}

/**
 * How many targets are failing in each workspace with a workspace-wide `delivery_failed` rule,
 * per `after_attempts`: a common table expression of the evaluating statement.
 */
export const FAILING_TARGETS = `failing_targets as materialized (
  select ws.workspace_id, ws.after_attempts,
         ${failingTargets('c.workspace_id = ws.workspace_id and c.deleted_at is null', 'ws.after_attempts')} as failing
  from (
    select distinct workspace_id, (condition->>'after_attempts')::int as after_attempts from alerts
    where enabled and condition->>'type' = 'delivery_failed' and condition->>'channel_id' is null
  ) ws
)`;

/** Seconds since the oldest `pending` event of the workspace arrived (0 when none waits). */
const QUEUE_AGE = arm(
  'queue_age',
  'any',
  `coalesce(extract(epoch from now() - min(e.received_at)), 0)::float8 as value,
   coalesce(extract(epoch from now() - min(e.received_at)), 0) > (a.condition->>'seconds')::float8 as firing`,
  `events e where $only and e.workspace_id = a.workspace_id
     and e.status in ('pending', 'processing') and e.status = 'pending'`,
);

/** The share of the monthly budget spent this month, in percent (null without a budget). */
const BUDGET = `select
     (case when w.monthly_budget_usd > 0 then ${spentThisMonth('w')} / w.monthly_budget_usd * 100
           when w.monthly_budget_usd = 0 then 100 end)::float8 as value,
     coalesce(${spentThisMonth('w')} >= w.monthly_budget_usd * (a.condition->>'percent')::numeric / 100, false) as firing
   where ${TYPE} = 'budget'`;

/**
 * `value` and `firing` of the alert `a` (joined with its workspace `w`): a lateral subquery
 * yielding exactly one row.
 */
export const MEASURE_ALERT = [
  failureRate('channel'),
  failureRate('workspace'),
  rejections('channel'),
  rejections('workspace'),
  deliveryFailed('channel'),
  deliveryFailed('workspace'),
  QUEUE_AGE,
  BUDGET,
  approvalWaiting('channel'),
  approvalWaiting('workspace'),
].join('\n union all\n');

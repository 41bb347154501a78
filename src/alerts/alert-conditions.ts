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

const AFTER_ATTEMPTS = `(a.condition->>'after_attempts')::int`;

/**
 * With `after_attempts` (`after`, SQL; null without), the newest delivery among `scope` (SQL
 * over `d`) still retried after that many failed attempts of its round, as `id` (null when
 * none). It reads the small partial index of migration 0042.
 */
function newestRetried(scope: string, after: string): string {
  return `(select max(d.id) as id from deliveries d
    where ${after} is not null and ${scope}
      and d.state in ('pending', 'sending') and d.attempts > d.round_start
      and d.attempts - d.round_start >= ${after})`;
}

/**
 * Whether the newest delivery that tells the rule anything failed: the newest ended one `e`
 * (delivered or failed), unless a later one `r` is still retried after `after_attempts`.
 */
const FAILING = `case when r.id > coalesce(e.id, 0) then true else e.failing end`;

/**
 * Whether the scope's newest settled delivery (by id: the later message) failed: 1 while it
 * did, 0 once a later one was delivered. Workspace-wide rules read LAST_DELIVERIES, found once
 * per evaluation for every workspace (and `after_attempts`) that has one.
 */
function deliveryFailed(scoped: 'channel' | 'workspace'): string {
  const only = `${TYPE} = 'delivery_failed' and a.condition->>'channel_id' is ${scoped === 'channel' ? 'not ' : ''}null`;
  const last =
    scoped === 'channel'
      ? `(select ${FAILING}
          from ${newestRetried(
            `d.channel_id = ${CHANNEL}
              and exists (select 1 from channels c where c.id = d.channel_id and c.workspace_id = a.workspace_id)`,
            AFTER_ATTEMPTS,
          )} r
          left join lateral (
            select d.id, d.state = 'failed' as failing from deliveries d
            where d.channel_id = ${CHANNEL} and d.state in ('delivered', 'failed')
              and exists (select 1 from channels c where c.id = d.channel_id and c.workspace_id = a.workspace_id)
            order by d.id desc limit 1
          ) e on true)`
      : `(select l.failing from last_deliveries l
          where l.workspace_id = a.workspace_id and l.after_attempts is not distinct from ${AFTER_ATTEMPTS})`;
  return `select case when failing then 1 else 0 end::float8 as value,
     coalesce(failing, false) as firing
   from (select ${last} as failing where ${only}) last`;
}

/**
 * Whether each workspace's newest settled delivery failed, for the workspaces with a
 * workspace-wide `delivery_failed` rule, per `after_attempts`: a common table expression of the
 * evaluating statement. The newest ended delivery is found channel by channel (each through
 * its index), the newest retried one in the few being retried.
 */
export const LAST_DELIVERIES = `last_deliveries as materialized (
  select ws.workspace_id, ws.after_attempts, ${FAILING} as failing
  from (
    select distinct workspace_id, (condition->>'after_attempts')::int as after_attempts from alerts
    where enabled and condition->>'type' = 'delivery_failed' and condition->>'channel_id' is null
  ) ws
  left join lateral (
    select d.id, d.state = 'failed' as failing from channels c
    cross join lateral (
      select d.id, d.state from deliveries d
      where d.channel_id = c.id and d.state in ('delivered', 'failed')
      order by d.id desc limit 1
    ) d
    where c.workspace_id = ws.workspace_id and c.deleted_at is null
    order by d.id desc limit 1
  ) e on true
  left join lateral ${newestRetried(
    `d.channel_id in (select c.id from channels c
       where c.workspace_id = ws.workspace_id and c.deleted_at is null)`,
    'ws.after_attempts',
  )} r on true
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
].join('\n union all\n');

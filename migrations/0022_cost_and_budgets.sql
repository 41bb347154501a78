-- What AI calls cost, and a monthly budget per workspace.
--
-- Costs are USD as exact decimals (numeric): a call's cost is kept as computed, and sums over a
-- month's calls are exact, never drifting as float sums would.

-- A workspace's own prices, per model name, in USD per million tokens; they take precedence over
-- the price table shipped with the service (src/ai/price-table.ts).
create table workspace_prices (
  workspace_id bigint not null references workspaces (id) on delete cascade,
  model text not null check (length(model) between 1 and 200),
  input_per_mtok numeric not null check (input_per_mtok >= 0),
  output_per_mtok numeric not null check (output_per_mtok >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (workspace_id, model)
);

-- The spend ledger: one row per AI call, answered or not (trials' calls too, with no event).
-- No foreign key to channels or events: what was spent stays counted after retention deletes an
-- event or a channel is deleted by hand.
create table spend (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  channel_id bigint,
  event_id bigint,
  provider text not null,
  model text,
  prompt_tokens integer,
  completion_tokens integer,
  -- null when the model's price or the call's usage is unknown
  cost_usd numeric check (cost_usd >= 0),
  created_at timestamptz not null default now()
);
create index spend_workspace_created_idx on spend (workspace_id, created_at);

-- The month's spend is counted exactly, as chats_used is: one counter per workspace, raised by
-- the statement that records the calls, with the month it counts; an earlier month reads as 0.
alter table workspaces
  add column monthly_budget_usd numeric check (monthly_budget_usd >= 0),
  add column spent_usd numeric not null default 0 check (spent_usd >= 0),
  add column spend_period_start timestamptz not null
    default (date_trunc('month', now() at time zone 'utc') at time zone 'utc');

-- The sum of the known costs of the calls of an event's current outcome; null when none is known.
alter table events add column cost_usd numeric;

-- A budget raised (or removed) lets the workspace's waiting events be answered: wake idle
-- workers at once rather than at their next poll.
create function workspaces_notify_budget() returns trigger
language plpgsql as $$
begin
  perform pg_notify('hookprompt_events', '');
  return null;
end
$$;

create trigger workspaces_notify_budget
  after update of monthly_budget_usd on workspaces
  for each row
  when (old.monthly_budget_usd is distinct from new.monthly_budget_usd
        and (new.monthly_budget_usd is null
             or new.monthly_budget_usd > coalesce(old.monthly_budget_usd, 0)))
  execute function workspaces_notify_budget();

-- Alerts: rules per workspace over its events, deliveries, queue and budget; each rule's state;
-- and every change of state with the notification it sends.

-- The Standard Webhooks secret a `webhook` notify signs with; made when first needed, sealed.
alter table workspaces add column alert_secret text;

create table alerts (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  -- {"type": "failure_rate" | "rejections" | "delivery_failed" | "queue_age" | "budget", ...}
  condition jsonb not null,
  -- one destination: where the alert says it started and cleared; its secret (a bot token, a
  -- webhook URL with credentials) apart, sealed
  notify jsonb not null,
  notify_secret text,
  enabled boolean not null default true,
  state text not null default 'ok' check (state in ('ok', 'firing')),
  -- since the last change of state, and the value measured then; null before the first change
  since timestamptz,
  last_value double precision,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index alerts_workspace_idx on alerts (workspace_id, id);

-- One row per change of state: the alert's history, and the queue of its notifications (sent
-- after the change commits, under a lease, so exactly one process sends each).
create table alert_changes (
  id bigint generated always as identity primary key,
  alert_id bigint not null references alerts (id) on delete cascade,
  state text not null check (state in ('ok', 'firing')),
  value double precision,
  changed_at timestamptz not null default now(),
  notification text not null default 'pending'
    check (notification in ('pending', 'sent', 'failed')),
  attempts integer not null default 0 check (attempts >= 0),
  locked_until timestamptz,
  last_error text,
  sent_at timestamptz
);
create index alert_changes_alert_idx on alert_changes (alert_id, id desc);
create index alert_changes_pending_idx on alert_changes (id) where notification = 'pending';

-- delivery_failed looks for a channel's latest ended deliveries.
create index deliveries_channel_ended_idx on deliveries (channel_id, id desc)
  where state in ('delivered', 'failed');

-- rejections counts a workspace's rejected requests in a window; they are few among its events.
create index events_rejected_idx on events (workspace_id, received_at) where status = 'rejected';

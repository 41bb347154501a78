-- hookprompt: workspaces, channels, events (the log and the queue), API keys.

create table workspaces (
  id bigint generated always as identity primary key,
  name text not null check (length(name) between 1 and 200),
  -- the default workspace is the one ADMIN_API_KEY manages; at most one row has it
  is_default boolean not null default false,
  chat_quota integer not null check (chat_quota >= 0),
  chats_used integer not null default 0 check (chats_used >= 0),
  -- first instant (UTC) of the calendar month chats_used counts; older means "0 used this month"
  quota_period_start timestamptz not null
    default (date_trunc('month', now() at time zone 'utc') at time zone 'utc'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index workspaces_single_default on workspaces (is_default) where is_default;

create table channels (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  template text not null,
  enabled boolean not null default true,
  -- the secret part of the webhook URL, kept so the URL can be shown again to admins
  webhook_token text not null,
  -- requests are matched by the token's SHA-256, so lookup time says nothing about the token
  webhook_token_hash text not null,
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index channels_webhook_token_hash_key on channels (webhook_token_hash);
create index channels_workspace_idx on channels (workspace_id, created_at) where deleted_at is null;

create table events (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  channel_id bigint not null references channels (id) on delete cascade,
  received_at timestamptz not null default now(),
  status text not null default 'pending'
    check (status in ('pending', 'processing', 'replied', 'skipped', 'failed', 'rejected')),
  -- the request body exactly as received: the source of truth (jsonb would refuse \u0000)
  payload text not null,
  prompt text,
  reply text,
  error text,
  attempts integer not null default 0 check (attempts >= 0),
  -- queue bookkeeping: when the event may be claimed next, and who holds it until when
  run_at timestamptz not null default now(),
  locked_by text,
  locked_until timestamptz,
  completed_at timestamptz
);
-- Brain Logs: newest first, by workspace or by channel, bounded by time
create index events_workspace_received_idx on events (workspace_id, received_at desc, id desc);
create index events_channel_received_idx on events (channel_id, received_at desc, id desc);
-- the queue: only unfinished events are indexed, so the index stays small
create index events_queue_idx on events (run_at, id) where status in ('pending', 'processing');

create table api_keys (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  -- the first characters, shown in lists so admins can tell keys apart
  prefix text not null,
  -- SHA-256 of the whole key; the key itself is shown once and never stored
  key_hash text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create unique index api_keys_key_hash_key on api_keys (key_hash);
create index api_keys_workspace_idx on api_keys (workspace_id);

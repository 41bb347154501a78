-- AI providers of a workspace, and which provider answered each event.
--
-- A provider is a server the channels of one workspace may name in `ai.provider` and
-- `ai.fallbacks` (src/providers/). The server's own AI_* configuration is the built-in provider
-- `default` of every workspace and has no row. Channels name providers by `name`.
create table providers (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  name text not null check (name ~ '^[A-Za-z0-9_-]{1,64}$' and name <> 'default'),
  kind text not null check (kind in ('openai', 'anthropic', 'echo')),
  -- null: the kind's usual server
  base_url text,
  -- write-only: never returned by the API
  api_key text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint providers_workspace_name_key unique (workspace_id, name)
);

alter table events
  -- the provider (by name) of the call whose answer was kept, or of the last call made
  add column provider text,
  -- every call of the current outcome, oldest first, the last 20 (constant default: the table is
  -- not rewritten)
  add column calls jsonb not null default '[]';

-- The calls of an outcome after more were made: the last 20, oldest first.
create function events_calls_kept(calls jsonb) returns jsonb
language sql immutable parallel safe as $$
  select coalesce(jsonb_agg(call order by n), '[]'::jsonb)
  from (
    select call, n from jsonb_array_elements(calls) with ordinality as made(call, n)
    order by n desc
    limit 20
  ) as kept
$$;

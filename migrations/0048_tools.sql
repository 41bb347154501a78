-- Tools of a workspace (src/tools/): HTTP endpoints and MCP servers a channel's model may call,
-- named by channels in `ai.tools`. Stored and tested through /api/v1/tools.
create table tools (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  name text not null check (name ~ '^[A-Za-z0-9_-]{1,48}$'),
  kind text not null check (kind in ('http', 'mcp')),
  description text not null check (char_length(description) between 1 and 1024),
  approval text not null default 'never' check (approval in ('never', 'always')),
  safe_in_trials boolean not null default false,
  timeout_ms integer not null default 10000 check (timeout_ms between 100 and 30000),
  -- a JSON object of header names and values, sealed whole (write-only; the API shows the names)
  headers text,
  -- sealed when it holds credentials or a query string (secret-columns.ts, kind `url`)
  url text not null,
  -- kind `http` only
  method text check (method in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
  input_schema jsonb,
  -- kind `mcp` only
  allowed_tools text[] check (cardinality(allowed_tools) between 1 and 64),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint tools_workspace_name_key unique (workspace_id, name),
  constraint tools_kind_members check (
    (kind = 'http' and method is not null and input_schema is not null and allowed_tools is null)
    or (kind = 'mcp' and allowed_tools is not null and method is null and input_schema is null)
  )
);

-- hookprompt: panel admins, their workspaces, and their sign-in sessions.

create table admins (
  id bigint generated always as identity primary key,
  email text not null check (length(email) between 3 and 320),
  -- argon2id, in the PHC string format (it carries its own salt and parameters)
  password_hash text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- e-mail addresses are compared without regard to case
create unique index admins_email_key on admins (lower(email));

create table admin_workspaces (
  admin_id bigint not null references admins (id) on delete cascade,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (admin_id, workspace_id)
);
create index admin_workspaces_workspace_idx on admin_workspaces (workspace_id);

create table admin_sessions (
  id bigint generated always as identity primary key,
  -- SHA-256 of the cookie value: a copy of this table does not let anyone sign in
  token_hash text not null,
  admin_id bigint not null references admins (id) on delete cascade,
  -- the workspace the admin is looking at; null falls back to their first one
  workspace_id bigint references workspaces (id) on delete set null,
  -- every form of this session carries this token (CSRF)
  csrf_token text not null,
  -- a one-time notice for the next page ("Channel saved."), as JSON
  flash text,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create unique index admin_sessions_token_hash_key on admin_sessions (token_hash);
create index admin_sessions_admin_idx on admin_sessions (admin_id);
create index admin_sessions_expires_idx on admin_sessions (expires_at);

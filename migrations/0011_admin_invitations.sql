-- hookprompt: an admin invites another admin to a workspace with a one-time sign-in link.

create table admin_invitations (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  email text not null check (length(email) between 3 and 320),
  -- SHA-256 of the link's token: a copy of this table lets nobody in
  token_hash text not null,
  invited_by bigint references admins (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  -- set once, when the link is used; a used link never works again
  accepted_at timestamptz
);
create unique index admin_invitations_token_hash_key on admin_invitations (token_hash);
create index admin_invitations_workspace_idx on admin_invitations (workspace_id);

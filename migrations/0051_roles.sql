-- Roles per workspace (src/platform/roles.ts): an admin's role in each of their workspaces, the
-- role an invitation gives on joining, and the role of each management API key. Admins and keys
-- from before roles could do everything: they become owners.
alter table admin_workspaces
  add column role text not null default 'owner' check (role in ('owner', 'editor', 'viewer'));
-- Every new membership names its role (the code that adds one knows which).
alter table admin_workspaces alter column role drop default;

alter table admin_invitations
  add column role text not null default 'editor' check (role in ('owner', 'editor', 'viewer'));

alter table api_keys
  add column role text not null default 'owner' check (role in ('owner', 'editor', 'viewer'));

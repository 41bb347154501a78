-- The audit log (src/audit/): who changed what in a workspace, each entry written in the same
-- transaction as the change it records. Append-only: the database itself refuses to update an
-- entry, and deletes only those the retention sweep is asked to delete (older than the days it
-- names in the transaction-local setting hookprompt.audit_retention_days). No foreign key to
-- workspaces: the record of a workspace outlives nothing it could cascade from.
create table audit_entries (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  workspace_id bigint not null,
  actor_kind text not null check (actor_kind in ('admin', 'api_key', 'system')),
  actor_id text,
  actor_name text not null,
  action text not null,
  target_kind text not null,
  target_id text,
  changes jsonb not null default '{}',
  ip text,
  user_agent text
);

-- The API's pages, newest first, with or without a filter on one column.
create index audit_entries_workspace_idx on audit_entries (workspace_id, id desc);
create index audit_entries_action_idx on audit_entries (workspace_id, action, id desc);
create index audit_entries_actor_idx on audit_entries (workspace_id, actor_id, id desc);
create index audit_entries_target_idx on audit_entries (workspace_id, target_kind, target_id, id desc);
-- Retention's sweep.
create index audit_entries_at_idx on audit_entries (at);

create function audit_entries_append_only() returns trigger
language plpgsql as $$
declare
  days integer := nullif(current_setting('hookprompt.audit_retention_days', true), '')::integer;
begin
  if tg_op = 'DELETE' and days >= 1 and old.at < now() - make_interval(days => days) then
    return old;
  end if;
  raise exception 'audit entries are append-only: % refused', lower(tg_op)
    using errcode = 'insufficient_privilege';
end
$$;

create trigger audit_entries_append_only
  before update or delete on audit_entries
  for each row execute function audit_entries_append_only();

create function audit_entries_no_truncate() returns trigger
language plpgsql as $$
begin
  raise exception 'audit entries are append-only: truncate refused'
    using errcode = 'insufficient_privilege';
end
$$;

create trigger audit_entries_no_truncate
  before truncate on audit_entries
  for each statement execute function audit_entries_no_truncate();

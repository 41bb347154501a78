-- Signing in opens the workspace the admin last used (never one they were added to meanwhile).
-- Null: none chosen yet, and sign-in opens the first workspace they had. Read only together
-- with the admin's memberships, so a workspace they were taken out of is never opened.
alter table admins
  add column last_workspace_id bigint references workspaces (id) on delete set null;

-- What each admin used last so far: the workspace of their most recently used session.
update admins a set last_workspace_id = latest.workspace_id
from (
  select distinct on (s.admin_id) s.admin_id, s.workspace_id
  from admin_sessions s
  join admin_workspaces m on m.admin_id = s.admin_id and m.workspace_id = s.workspace_id
  order by s.admin_id, s.last_seen_at desc, s.id desc
) latest
where latest.admin_id = a.id;

create index admins_last_workspace_idx on admins (last_workspace_id);

-- Prompt versions and trials.
--
-- channels.version: the channel's current version, 1 at creation; each change of its template or
-- of its AI settings makes the next one, kept whole in channel_versions (never changed after).
alter table channels add column version integer not null default 1 check (version >= 1);

create table channel_versions (
  channel_id bigint not null references channels (id) on delete cascade,
  version integer not null check (version >= 1),
  template text not null,
  ai jsonb not null,
  created_at timestamptz not null default now(),
  primary key (channel_id, version)
);

-- The channels that exist have one version each: what they are now.
insert into channel_versions (channel_id, version, template, ai, created_at)
  select id, 1, template, ai, updated_at from channels;

-- events.version: the channel version the event's current outcome was rendered with, written when
-- a worker claims it (null until then, and for rejected events). Events stored before versions
-- existed keep null: no record says which template answered them, and filling it in would
-- rewrite the whole events table under a lock.
alter table events add column version integer;

-- A trial: a candidate template and/or AI settings asked on chosen events of its channel, with
-- nothing delivered or changed. `candidate` is what was given; `template` and `ai` are what is
-- asked (the candidate merged onto the channel as it was when the trial started), and what
-- promote makes the next version.
create table trials (
  id bigint generated always as identity primary key,
  workspace_id bigint not null references workspaces (id) on delete cascade,
  channel_id bigint not null references channels (id) on delete cascade,
  status text not null default 'running' check (status in ('running', 'done', 'canceled')),
  candidate jsonb not null,
  template text not null,
  ai jsonb not null,
  total integer not null check (total between 1 and 100),
  done integer not null default 0,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index trials_channel_idx on trials (channel_id, id desc);

-- One chosen event of a trial, at its place in the results. `current` is the event's stored
-- outcome when the trial started; `candidate` is null until asked. A result is worked on under a
-- lease, like an event, so a trial in progress survives a restart: what was asked stays, the
-- rest is taken again once its lease ends.
create table trial_results (
  trial_id bigint not null references trials (id) on delete cascade,
  position integer not null,
  event_id bigint not null,
  current jsonb not null,
  candidate jsonb,
  locked_by text,
  locked_until timestamptz,
  primary key (trial_id, position)
);
create index trial_results_open_idx on trial_results (trial_id, position) where candidate is null;

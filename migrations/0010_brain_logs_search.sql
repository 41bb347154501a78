-- Brain Logs for operators: search inside payloads, replay history, the live tail, charts.

-- The payload as jsonb, for payload.<path> filters. Null for the bodies jsonb refuses (a \u0000
-- escape, a lone surrogate, a number beyond numeric's range): those rows are checked against
-- the filter outside the database instead.
create function events_payload_jsonb(payload text) returns jsonb
language plpgsql immutable parallel safe as $$
begin
  return payload::jsonb;
exception when others then
  return null;
end
$$;

-- Refused requests are not parsed: their bodies are whatever a sender sent (nested without
-- limit, cut short), and the embedded database's parser could exhaust its stack on them. Their
-- payload_json is null, so the template engine decides for them too; a replay makes the event
-- pending, and the column is computed again.
alter table events add column payload_json jsonb
  generated always as (
    case when status <> 'rejected' then events_payload_jsonb(payload) end
  ) stored;
-- jsonb_path_ops answers containment (payload_json @> '{"order":{"status":"paid"}}') only,
-- which is all the filters ask, in an index about a third the size of the default one.
create index events_payload_json_idx on events using gin (payload_json jsonb_path_ops);
-- Refused requests and the few payloads jsonb refused are candidates of every payload filter:
-- listed here, so a filter still reads indexes only.
create index events_payload_unparsed_idx on events (workspace_id, received_at)
  where payload_json is null;

-- Free text (q) looks in the payload, prompt, reply and error at once; a trigram index makes a
-- rare word cheap to find. pg_trgm ships with PostgreSQL and PGlite, but a server may not offer
-- it (or the role may not create extensions): search then works without the index.
do $$
begin
  create extension if not exists pg_trgm;
exception when others then
  raise notice 'pg_trgm is not available: Brain Logs free-text search runs without an index';
end
$$;
do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_trgm') then
    -- The expression must stay exactly as events-where.ts writes it, or the index is not used.
    execute $index$
      create index events_search_text_idx on events using gin (
        (payload || E'\x1f' || coalesce(prompt, '') || E'\x1f' || coalesce(reply, '')
          || E'\x1f' || coalesce(error, '')) gin_trgm_ops)
    $index$;
  end if;
end
$$;

-- The workspace listing index, now also holding status and channel, so the Brain Logs chart
-- counts a week of events from the index alone. It replaces the old one: no extra index to keep.
create index events_workspace_received_chart_idx
  on events (workspace_id, received_at desc, id desc) include (status, channel_id);
drop index events_workspace_received_idx;

-- Earlier outcomes of a replayed event, oldest first.
alter table events add column history jsonb not null default '[]';

-- Recorded by the AI settings of each channel; replay keeps them in history. (`if not exists`:
-- the migration that introduces AI settings adds them too.)
alter table events add column if not exists model text;
alter table events add column if not exists usage jsonb;
alter table events add column if not exists thread_key text;

-- The live tail: every stored event and every status change takes the next number of one
-- sequence. A stream resumes after the last number it sent (Last-Event-ID).
create sequence events_change_seq;
alter table events add column change_seq bigint not null default nextval('events_change_seq');
alter sequence events_change_seq owned by events.change_seq;
create index events_change_idx on events (workspace_id, change_seq);

create function events_touch_change() returns trigger
language plpgsql as $$
begin
  new.change_seq := nextval('events_change_seq');
  return new;
end
$$;

create trigger events_touch_change
  before update of status on events
  for each row when (old.status is distinct from new.status)
  execute function events_touch_change();

-- One notification per statement that stored events or changed a status, naming the
-- workspaces concerned; every process's streams then read what changed from the table.
create function events_notify_stored() returns trigger
language plpgsql as $$
declare
  workspaces text;
begin
  select string_agg(distinct workspace_id::text, ',') into workspaces from changed_events;
  if workspaces is not null then
    -- past NOTIFY's 8000-byte payload limit, '*' means every workspace
    perform pg_notify('hookprompt_event_changes',
      case when length(workspaces) > 7000 then '*' else workspaces end);
  end if;
  return null;
end
$$;

create trigger events_notify_stored
  after insert on events
  referencing new table as changed_events
  for each statement
  execute function events_notify_stored();

create function events_notify_status() returns trigger
language plpgsql as $$
declare
  workspaces text;
begin
  select string_agg(distinct n.workspace_id::text, ',') into workspaces
  from new_events n join old_events o on o.id = n.id
  where n.change_seq <> o.change_seq;
  if workspaces is not null then
    -- past NOTIFY's 8000-byte payload limit, '*' means every workspace
    perform pg_notify('hookprompt_event_changes',
      case when length(workspaces) > 7000 then '*' else workspaces end);
  end if;
  return null;
end
$$;

create trigger events_notify_status
  after update on events
  referencing old table as old_events new table as new_events
  for each statement
  execute function events_notify_status();

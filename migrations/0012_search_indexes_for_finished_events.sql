-- Brain Logs search indexes hold finished events only.
--
-- Every update of an event in the queue (claimed, attempt started, finished) writes a new row
-- version, and PostgreSQL adds an entry for it to every index whose predicate it meets (none of
-- these updates can be HOT). Over the whole table, the trigram index re-read about a thousand
-- trigrams of a 1 KB payload four times per event, and the payload's jsonb was parsed again at
-- each update, inside an exception block (a subtransaction): most of the database's CPU per
-- webhook. Limited to finished events, each is indexed once, when the worker finishes it, and
-- storing a webhook pays for none of it.
--
-- The few unfinished events are found through the queue index instead (events-where.ts).

alter table events drop column payload_json;
alter table events add column payload_json jsonb
  generated always as (
    case when status in ('replied', 'skipped', 'failed') then events_payload_jsonb(payload) end
  ) stored;
create index events_payload_json_idx on events using gin (payload_json jsonb_path_ops)
  where status in ('replied', 'skipped', 'failed');
-- Finished events the payload index cannot list: refused requests (not parsed) and the rare
-- payload jsonb refuses.
create index events_payload_unparsed_idx on events (workspace_id, received_at)
  where payload_json is null and status in ('replied', 'skipped', 'failed', 'rejected');

do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_trgm') then
    drop index if exists events_search_text_idx;
    -- The expression must stay exactly as events-where.ts writes it, or the index is not used.
    execute $index$
      create index events_search_text_idx on events using gin (
        (payload || E'\x1f' || coalesce(prompt, '') || E'\x1f' || coalesce(reply, '')
          || E'\x1f' || coalesce(error, '')) gin_trgm_ops)
      where status in ('replied', 'skipped', 'failed', 'rejected')
    $index$;
  end if;
end
$$;

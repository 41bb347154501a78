-- Guardrails and the filter before the AI.
--
-- channels.accept_when: the conditions a payload must meet to be answered (src/conditions/);
-- an empty list accepts every payload.
alter table channels add column accept_when jsonb not null default '[]'::jsonb;

-- A payload that does not meet them is stored `filtered`: finished on arrival, never queued.
alter table events drop constraint events_status_check;
alter table events add constraint events_status_check
  check (status in ('pending', 'processing', 'replied', 'skipped', 'failed', 'rejected', 'filtered'));

-- events.redactions: {kind: distinct values} replaced by placeholders in what the last call sent.
-- events.redaction_values: those placeholders and their values, never shown, so that the event
-- can be read whole when it is a later event's history (redacted again with that one's numbering).
alter table events add column redactions jsonb;
alter table events add column redaction_values jsonb;

-- Filtered events are finished: Brain Logs finds them with the other finished events, so the
-- partial indexes of migration 0012 over finished events take them in too.
drop index events_payload_unparsed_idx;
create index events_payload_unparsed_idx on events (workspace_id, received_at)
  where payload_json is null and status in ('replied', 'skipped', 'failed', 'rejected', 'filtered');

do $$
begin
  if exists (select 1 from pg_extension where extname = 'pg_trgm') then
    drop index if exists events_search_text_idx;
    -- The expression must stay exactly as events-where.ts writes it, or the index is not used.
    execute $index$
      create index events_search_text_idx on events using gin (
        (payload || E'\x1f' || coalesce(prompt, '') || E'\x1f' || coalesce(reply, '')
          || E'\x1f' || coalesce(error, '')) gin_trgm_ops)
      where status in ('replied', 'skipped', 'failed', 'rejected', 'filtered')
    $index$;
  end if;
end
$$;

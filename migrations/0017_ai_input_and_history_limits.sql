-- What is sent to the AI, and what an event keeps of its earlier outcomes, have limits.
--
-- input_truncated: the event's last call sent less than it rendered, cut to AI_MAX_INPUT_CHARS
-- (src/ai/input-limit.ts). A constant default: the table is not rewritten.
alter table events add column input_truncated boolean not null default false;

-- A text of an earlier outcome keeps its first 10,000 characters and a mark.
create function events_history_text(t text) returns text
language sql immutable parallel safe as $$
  select case when length(t) > 10000 then left(t, 10000) || '…[truncated]' else t end
$$;

-- An event keeps its last 20 earlier outcomes (oldest first), their texts cut as above, so one
-- event, and a page of them, stays a few megabytes however often it is replayed. Replay appends
-- through it (src/brain-logs/events-replay-repo.ts).
create function events_history_kept(history jsonb) returns jsonb
language sql immutable parallel safe as $$
  select coalesce(jsonb_agg(
           outcome || jsonb_build_object(
             'prompt', events_history_text(outcome->>'prompt'),
             'reply', events_history_text(outcome->>'reply'),
             'error', events_history_text(outcome->>'error'))
           order by n), '[]'::jsonb)
  from (
    select outcome, n from jsonb_array_elements(history) with ordinality as outcomes(outcome, n)
    order by n desc
    limit 20
  ) as kept
$$;

update events set history = events_history_kept(history)
where history <> '[]'::jsonb
  and (jsonb_array_length(history) > 20
       or exists (select from jsonb_array_elements(history) as outcome
                  where length(outcome->>'prompt') > 10000
                     or length(outcome->>'reply') > 10000
                     or length(outcome->>'error') > 10000));

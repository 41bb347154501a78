-- What a batch of webhooks does to the stored events holding its dedup keys: each counts the
-- batch's duplicates of it, and a key past its window is freed for the request that claims it
-- again. Called by the statement that stores the batch (src/hooks/store-event-batch.ts), and only
-- for a batch that met such an event: an UPDATE of events written in the statement itself would
-- cost every batch its start (a dozen indexes, generated columns, an `after update` statement
-- trigger), even when it updates nothing.
--
-- Three parallel arrays: the events, how many duplicates of each the batch holds, and whether
-- each one's key is still within its window.
create function events_hold_keys(held_ids bigint[], held_duplicates integer[], keys_open boolean[])
returns integer
language sql
as $$
  with held as (
    update events set
      duplicates = events.duplicates + met.duplicates,
      dedup_key = case when met.open then events.dedup_key end,
      dedup_expires_at = case when met.open then events.dedup_expires_at end,
      dedup_body_hash = case when met.open then events.dedup_body_hash end
    from unnest(held_ids, held_duplicates, keys_open) as met(id, duplicates, open)
    where events.id = met.id
    returning 1
  )
  select count(*)::integer from held
$$;

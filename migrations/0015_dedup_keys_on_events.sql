-- Dedup keys move onto the event they belong to.
--
-- A keyed webhook (every Standard Webhooks, Svix, GitHub or Shopify delivery, under the default
-- `auto` mode) wrote a second row, in dedup_keys, with three index entries, from its own node of
-- the statement that stores a batch: about 14 µs of PostgreSQL's CPU per keyed event, a sixth
-- of what storing it costs (docs/scaling.md). The event now carries its key, and a partial
-- unique index on it is what lets exactly one of several concurrent requests with one key be
-- stored, across every instance: `insert ... on conflict do nothing` waits for a transaction
-- inserting the same key and stores nothing when it commits.
--
-- A key counts until dedup_expires_at (its window from when it was accepted), and stays in the
-- index as long as its event: a later request with an expired key frees it first (the receiver
-- sets it to null on the old event), so no job has to visit every keyed event when its window
-- ends. The index is as large as the keyed events that retention keeps, and goes with them.
--
-- Upgrading rewrites every event whose key is still in its window (each is indexed again, its
-- search entries included): 151 s for 300,000 such keys in a table of 1,000,000 events on a
-- 2-core machine. Writes to events wait only for the index build at the end; a duplicate of one
-- of those events, counted by an instance of the previous version meanwhile, waits for all of it.
alter table events
  add column dedup_key text,
  add column dedup_expires_at timestamptz;

update events set dedup_key = dedup_keys.key, dedup_expires_at = dedup_keys.expires_at
from dedup_keys
where dedup_keys.event_id = events.id
  and dedup_keys.channel_id = events.channel_id
  and dedup_keys.expires_at > now();

create unique index events_dedup_key_idx on events (channel_id, dedup_key)
  where dedup_key is not null;

drop table dedup_keys;

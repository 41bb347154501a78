-- Dedup keys lose their foreign keys.
--
-- Each key inserted ran two foreign-key triggers (its channel and its event, each a query that
-- locks the row it finds) inside the statement that stores a batch of webhooks, while that
-- statement holds the workspace's quota row: 0.41 of the 4.8 ms a batch of 64 keyed events took
-- PostgreSQL. Neither check can fail: the key is written by the same statement as its event,
-- for a channel that statement has just read. Neither cascade is needed: channels are only ever
-- soft-deleted (their ids are not reused, so an orphaned key can match nothing and expires with
-- its window), and events are deleted only by retention, which now deletes their keys itself
-- (by dedup_keys_event_idx, kept for that).
alter table dedup_keys drop constraint dedup_keys_channel_id_fkey;
alter table dedup_keys drop constraint dedup_keys_event_id_fkey;

-- Events lose their foreign keys to their workspace and channel.
--
-- Each stored event ran two foreign-key triggers, one locking query per row each, inside the
-- statement that stores a batch of webhooks while it holds the workspace's quota row: 0.007 ms
-- of PostgreSQL's CPU per event, a seventh of what storing one costs (bench/database-cost.ts).
-- Neither check can fail: that statement writes an event only for the channel row it has just
-- read, and the channel's workspace row it has locked.
--
-- The cascade stays, as a trigger on the side that is deleted, where it costs nothing when
-- events are stored. No code path deletes a channel (they are soft-deleted) or a workspace,
-- but an operator may: deleting a workspace deletes its channels (their own foreign key), and
-- deleting channels deletes their events, and with them their deliveries.
alter table events drop constraint events_workspace_id_fkey;
alter table events drop constraint events_channel_id_fkey;

create function channels_delete_events() returns trigger
language plpgsql as $$
begin
  delete from events where channel_id in (select id from deleted_channels);
  return null;
end
$$;

create trigger channels_delete_events
  after delete on channels
  referencing old table as deleted_channels
  for each statement
  execute function channels_delete_events();

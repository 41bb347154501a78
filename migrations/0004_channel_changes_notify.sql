-- Every process caches recently used channels by webhook-token hash (the receiver's shortcut);
-- any change to a channel tells all of them to drop the old entry.
create function notify_channel_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('hookprompt_channel_changed', old.webhook_token_hash);
  return null;
end;
$$;

create trigger channels_notify_changed
  after update or delete on channels
  for each row execute function notify_channel_changed();

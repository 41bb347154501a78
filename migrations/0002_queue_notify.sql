-- Wake idle workers as soon as events arrive, instead of waiting for their next poll.
-- One notification per insert statement (not per row), and only when it stored a pending
-- event: rejected requests need no reply. Notifications are sent at commit, so a woken
-- worker always finds the event it was told about. Workers still poll, so a notification
-- lost while no worker listened delays an event by one poll interval at most.

create function events_notify_pending() returns trigger
language plpgsql as $$
begin
  if exists (select 1 from inserted_events where status = 'pending') then
    perform pg_notify('hookprompt_events', '');
  end if;
  return null;
end
$$;

create trigger events_notify_pending
  after insert on events
  referencing new table as inserted_events
  for each statement
  execute function events_notify_pending();

-- The channel's reply URL becomes a row of `destinations`: a `webhook` of role `reply_url`, at
-- most one a channel, outside the channel's list of destinations (no place in it, no `when`, no
-- message: it sends every finished event as the Standard Webhooks body). Its messages keep
-- `deliveries.destination_id` null: the channel names its one reply URL. The signing secrets
-- stay on `channels`: they sign the channel's `webhook` destinations too.

alter table destinations
  add column role text not null default 'destination'
    check (role in ('destination', 'reply_url')),
  -- why delivery was turned off automatically (the reply URL answered 410); null otherwise
  add column disabled_reason text,
  alter column position drop not null,
  alter column conditions drop not null,
  alter column message drop not null;
alter table destinations add constraint destinations_role_settings_check check (
  case role
    when 'reply_url' then kind = 'webhook' and position is null and conditions is null
                          and message is null
    else position is not null and conditions is not null and message is not null
  end);
create unique index destinations_reply_url_key on destinations (channel_id)
  where role = 'reply_url';

-- A row for every channel whose reply delivery is not as a new channel's (no URL, on): the URL
-- as stored (sealed when it holds credentials or a query), whether delivery is on, and why not.
-- A channel without a URL keeps its on/off setting for the URL it gets next.
insert into destinations (channel_id, role, kind, enabled, disabled_reason, url, created_at,
                          updated_at)
select id, 'reply_url', 'webhook', reply_enabled, reply_disabled_reason, reply_url, created_at,
       updated_at
from channels
where reply_url is not null or not reply_enabled or reply_disabled_reason is not null;

alter table channels
  drop column reply_url,
  drop column reply_enabled,
  drop column reply_disabled_reason;

-- Whatever statement finishes an event creates, in its transaction, the reply URL's message
-- (when the channel has a URL, on or off: a message waits while it is off) and one per enabled
-- destination of the channel's list (their `when` is read when they are first claimed).
create or replace function events_finished() returns trigger
language plpgsql as $$
declare
  created integer;
  more integer;
begin
  insert into deliveries (event_id, channel_id, webhook_id, type)
  select new.id, destinations.channel_id, 'msg_' || replace(gen_random_uuid()::text, '-', ''),
         'event.' || new.status
  from destinations
  where destinations.channel_id = new.channel_id and destinations.role = 'reply_url'
    and destinations.url is not null;
  get diagnostics created = row_count;
  insert into deliveries (event_id, channel_id, webhook_id, type, destination_id, thread_key)
  select new.id, destinations.channel_id, 'msg_' || replace(gen_random_uuid()::text, '-', ''),
         'event.' || new.status, destinations.id, new.thread_key
  from destinations
  where destinations.channel_id = new.channel_id and destinations.role = 'destination'
    and destinations.enabled
  order by destinations.position;
  get diagnostics more = row_count;
  if created + more > 0 then
    perform pg_notify('hookprompt_deliveries', '');
  end if;
  perform pg_notify('hookprompt_event_finished', new.id::text);
  return null;
end
$$;

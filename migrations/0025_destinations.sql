-- Destinations: where a channel's replies go besides its reply URL (src/destinations/), and
-- their messages on the one delivery queue of migration 0008.

create table destinations (
  id bigint generated always as identity primary key,
  channel_id bigint not null references channels (id) on delete cascade,
  -- the entry's place in the channel's list (at most five)
  position smallint not null check (position between 0 and 4),
  kind text not null check (kind in ('webhook', 'slack', 'telegram', 'discord', 'teams')),
  enabled boolean not null default true,
  -- `when`: conditions over status, payload.<p> and json.<p> (src/conditions/)
  conditions jsonb not null,
  message text not null,
  -- the webhook kind's URL (shown, not a secret)
  url text check (length(url) <= 2000),
  -- the kind's one secret, sealed by src/secrets/: a bot token, or a webhook URL
  secret text,
  -- the templated fields of the kind: channel, thread_ts, chat_id, reply_to, thread_id
  fields jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index destinations_channel_idx on destinations (channel_id, position);

-- A message to a destination is a delivery with its destination_id (null: the reply URL's).
-- thread_key orders the messages of one thread to one destination; parts counts the parts of a
-- long text the platform took already, so a retry repeats none.
alter table deliveries
  add column destination_id bigint references destinations (id) on delete cascade,
  add column thread_key text collate "C",
  add column parts integer not null default 0 check (parts >= 0);
-- skipped: the destination's `when` did not hold, or its message rendered empty
alter table deliveries drop constraint deliveries_state_check;
alter table deliveries add constraint deliveries_state_check
  check (state in ('pending', 'sending', 'delivered', 'failed', 'skipped'));
create index deliveries_destination_idx on deliveries (destination_id, id)
  where destination_id is not null;
-- the claim's check that no earlier message of the thread to the destination is unsent
create index deliveries_thread_queue_idx on deliveries (destination_id, thread_key, id)
  where destination_id is not null and thread_key is not null and state in ('pending', 'sending');

-- Whatever statement finishes an event creates, in its transaction, the reply URL's message
-- and one per enabled destination (their `when` is read when they are first claimed).
create or replace function events_finished() returns trigger
language plpgsql as $$
declare
  created integer;
  more integer;
begin
  insert into deliveries (event_id, channel_id, webhook_id, type)
  select new.id, channels.id, 'msg_' || replace(gen_random_uuid()::text, '-', ''),
         'event.' || new.status
  from channels
  where channels.id = new.channel_id and channels.reply_url is not null;
  get diagnostics created = row_count;
  insert into deliveries (event_id, channel_id, webhook_id, type, destination_id, thread_key)
  select new.id, destinations.channel_id, 'msg_' || replace(gen_random_uuid()::text, '-', ''),
         'event.' || new.status, destinations.id, new.thread_key
  from destinations
  where destinations.channel_id = new.channel_id and destinations.enabled
  order by destinations.position;
  get diagnostics more = row_count;
  if created + more > 0 then
    perform pg_notify('hookprompt_deliveries', '');
  end if;
  perform pg_notify('hookprompt_event_finished', new.id::text);
  return null;
end
$$;

-- Getting the reply back: senders that wait for it (a notification when an event finishes) and
-- reply delivery (a per-channel URL, a signing secret, and a durable queue of messages).

alter table channels
  -- where each finished event of the channel is POSTed; null: no delivery
  add column reply_url text check (length(reply_url) <= 2000),
  -- false after the receiver answered 410 (or an admin turned it off); messages wait meanwhile
  add column reply_enabled boolean not null default true,
  add column reply_disabled_reason text,
  -- the Standard Webhooks signing secret, whsec_<base64>; made when first needed
  add column reply_secret text,
  -- after a rotation the previous secret signs too, until reply_previous_until
  add column reply_previous_secret text,
  add column reply_previous_until timestamptz;

-- One row per message: a finished event of a channel with a reply URL. The queue discipline is
-- that of the events table: claim with skip locked, a lease, owner-checked writes.
create table deliveries (
  id bigint generated always as identity primary key,
  event_id bigint not null references events (id) on delete cascade,
  channel_id bigint not null references channels (id) on delete cascade,
  -- the Standard Webhooks message id: the same on every attempt, so receivers can drop repeats
  webhook_id text not null,
  type text not null check (type in ('event.replied', 'event.skipped', 'event.failed')),
  state text not null default 'pending'
    check (state in ('pending', 'sending', 'delivered', 'failed')),
  -- the message body, fixed before the first attempt so every attempt sends the same bytes
  message text,
  attempts integer not null default 0 check (attempts >= 0),
  -- attempts made before the current round of the retry schedule ("deliver again" starts one)
  round_start integer not null default 0 check (round_start >= 0),
  run_at timestamptz not null default now(),
  locked_by text,
  locked_until timestamptz,
  due_at timestamptz generated always as (
    case state when 'pending' then run_at when 'sending' then locked_until end
  ) stored,
  last_status integer,
  last_error text,
  delivered_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index deliveries_webhook_id_key on deliveries (webhook_id);
create index deliveries_event_idx on deliveries (event_id, id);
create index deliveries_channel_idx on deliveries (channel_id, id);
create index deliveries_queue_idx on deliveries (due_at, id) where state in ('pending', 'sending');

-- Every attempt, for Brain Logs: what the receiver answered, or why there was no answer.
create table delivery_attempts (
  id bigint generated always as identity primary key,
  delivery_id bigint not null references deliveries (id) on delete cascade,
  attempted_at timestamptz not null default now(),
  -- the HTTP status; null when no answer came (timeout, refused address, reset connection)
  status integer,
  error text,
  duration_ms integer not null check (duration_ms >= 0)
);
create index delivery_attempts_delivery_idx on delivery_attempts (delivery_id, id);

-- When an event finishes, whatever statement finishes it: its delivery is created in the same
-- transaction (no finished event without its message, none twice), and every process holding a
-- sender's answer for it is told (NOTIFY is sent at commit, with the event id).
create function events_finished() returns trigger
language plpgsql as $$
begin
  insert into deliveries (event_id, channel_id, webhook_id, type)
  select new.id, channels.id, 'msg_' || replace(gen_random_uuid()::text, '-', ''),
         'event.' || new.status
  from channels
  where channels.id = new.channel_id and channels.reply_url is not null;
  if found then
    perform pg_notify('hookprompt_deliveries', '');
  end if;
  perform pg_notify('hookprompt_event_finished', new.id::text);
  return null;
end
$$;

create trigger events_finished
  after update of status on events
  for each row
  when (new.status in ('replied', 'skipped', 'failed') and old.status is distinct from new.status)
  execute function events_finished();

-- AI settings per channel, threads, and what each AI call used.

-- The channel's `ai` settings as given (members left out mean the server's default).
alter table channels add column ai jsonb not null default '{}';

alter table events
  -- the channel's thread_key template rendered with the payload when the event arrived;
  -- null when the channel has none or it rendered empty
  add column thread_key text,
  -- the model the call named, the tokens the provider reported, and the call's duration
  add column model text,
  add column usage jsonb,
  add column latency_ms integer check (latency_ms >= 0),
  -- placeholders of the template and system prompt that were absent or null in the payload
  add column missing text[];

-- A thread's history: its last replied events, newest first.
create index events_thread_idx on events (channel_id, thread_key, id) where thread_key is not null;
-- The claim's "no earlier unfinished event in this thread" check reads only unfinished events.
create index events_thread_queue_idx on events (channel_id, thread_key, id)
  where thread_key is not null and status in ('pending', 'processing');
-- The claim deals events out channel by channel (fair turns): it walks the channels that have
-- unfinished events and takes each one's oldest due events, all from this index. It replaces
-- the (due_at, id) queue index, which no statement orders by any more.
create index events_queue_channel_idx on events (channel_id, due_at, id)
  where status in ('pending', 'processing');
drop index events_queue_idx;

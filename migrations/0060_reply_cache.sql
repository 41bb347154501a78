-- The reply cache (channel ai.reply_cache_s, src/reply-cache/): an event replied without a tool
-- call keeps the hash of the request its model was sent (system prompt, history, prompt and the
-- call's settings, as sent: after redaction), and the reply as the model wrote it when the
-- channel put placeholders back (`restore`), so a later event asking the same can be given that
-- reply restored with its own values. An event served so names the event it was served from;
-- no foreign key, like every reference between events (0014): retention deletes either freely.
alter table events
  add column request_hash bytea,
  add column reply_unrestored text,
  add column cached_from bigint;

-- The lookup of each event of a channel with the cache on: the newest event of the channel with
-- the same hash completed inside the window. Only cacheable replies have a hash, so the index
-- holds those alone and a miss reads one index page.
create index events_reply_cache_idx on events (channel_id, request_hash, completed_at)
  where request_hash is not null;

-- The Workspace page's savings: the events of this month served from the cache.
create index events_cached_idx on events (workspace_id, received_at) where cached_from is not null;

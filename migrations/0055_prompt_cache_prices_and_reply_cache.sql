-- Prompt caching and the reply cache. A workspace's price for a model may price tokens read
-- from and written to a provider's prompt cache (else the shipped table's, else the input
-- price). An event replied by a call keeps the hash of its request (after redaction) so an
-- identical request of the same channel within `ai.reply_cache_s` is answered with its reply;
-- an event answered so names it in `cached_from`.
alter table workspace_prices
  add column cache_read_per_mtok numeric check (cache_read_per_mtok >= 0),
  add column cache_write_per_mtok numeric check (cache_write_per_mtok >= 0);
alter table events add column request_hash text;
alter table events add column cached_from bigint;
create index events_reply_cache_idx on events (channel_id, request_hash, completed_at desc)
  where request_hash is not null;
-- The spend ledger keeps each call's prompt-cache tokens (0 when the provider reported none).
alter table spend
  add column cache_read_tokens integer not null default 0,
  add column cache_write_tokens integer not null default 0;

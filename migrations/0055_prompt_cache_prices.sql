-- Prompt caching: a workspace's price for a model may price tokens read from and written to a
-- provider's prompt cache (else the shipped table's, else the input price), and the spend ledger
-- keeps each call's cache tokens (0 when the provider reported none).
alter table workspace_prices
  add column cache_read_per_mtok numeric check (cache_read_per_mtok >= 0),
  add column cache_write_per_mtok numeric check (cache_write_per_mtok >= 0);
alter table spend
  add column cache_read_tokens integer not null default 0,
  add column cache_write_tokens integer not null default 0;

-- Browser senders: the origins whose web pages may post to a channel's webhook URL (CORS),
-- kept as browsers write them in `Origin` (scheme://host[:port], lower case, no default port),
-- or ['*'] for any. Empty: the receiver ignores `Origin` and refuses preflights, as before.
alter table channels
  add column allowed_origins text[] not null default '{}'
    check (cardinality(allowed_origins) <= 20);

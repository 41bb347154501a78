-- Sender checks per channel (signature verification, allowed addresses), duplicate detection,
-- and what the receiver keeps of each request besides its body (headers, sender address).

alter table channels
  -- {"scheme": ..., "header"?, "encoding"?, "tolerance_s"?}; the secret is kept apart below
  add column verification jsonb not null default '{"scheme": "none"}',
  -- the verification secret: never shown by the API or the panel, read only by the receiver
  add column verification_secret text,
  -- IPs and CIDR ranges; empty lets every sender in
  add column allowed_ips text[] not null default '{}',
  -- {"mode": "auto" | "header" | "payload" | "off", "field"?, "window_s"}
  add column dedup jsonb not null default '{"mode": "auto", "window_s": 86400}';

alter table events
  -- request headers, lower-case names, credentials already replaced by "[redacted]"
  add column headers jsonb,
  add column sender_ip text,
  -- later requests with the same dedup key, answered with this event instead of stored
  add column duplicates integer not null default 0 check (duplicates >= 0);

-- The dedup keys accepted per channel, each until it expires. The primary key is what makes
-- exactly one of several concurrent requests with one key win, across every instance.
create table dedup_keys (
  channel_id bigint not null references channels (id) on delete cascade,
  key text not null,
  event_id bigint not null references events (id) on delete cascade,
  expires_at timestamptz not null,
  primary key (channel_id, key)
);
-- retention deletes expired keys oldest first; deleting an event finds its key by event_id
create index dedup_keys_expires_idx on dedup_keys (expires_at);
create index dedup_keys_event_idx on dedup_keys (event_id);

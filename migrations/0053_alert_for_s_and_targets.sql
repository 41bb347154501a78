-- Alerts that don't flap. `for_s`: for how many seconds a condition must hold at every check
-- before the alert fires (and must not hold before it clears). `turning_since`: since when every
-- check has measured the other state than the alert's (null while they agree): the alert turns
-- once that has lasted `for_s`.
alter table alerts
  add column for_s integer not null default 0 check (for_s between 0 and 3600),
  add column turning_since timestamptz;

-- delivery_failed reads each target's newest settled message on its own: per channel the reply
-- URL's (destination_id null) and each destination's. This index finds either at once; the one
-- it replaces held a channel's settled messages of every target mixed.
create index deliveries_target_settled_idx on deliveries (channel_id, destination_id, id desc)
  where state in ('delivered', 'failed');
drop index deliveries_channel_ended_idx;

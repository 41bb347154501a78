-- delivery_failed with after_attempts looks for a channel's newest delivery still being retried
-- after failed attempts; those are few among its deliveries, so the index holds only them.
create index deliveries_channel_retried_idx on deliveries (channel_id, id desc)
  where state in ('pending', 'sending') and attempts > round_start;

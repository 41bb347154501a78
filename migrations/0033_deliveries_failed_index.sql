-- The failed messages, by event: Brain Logs' failure groups ("delivery to Slack #7 failed ×3")
-- and the counts and chart of its Delivery filter read these few instead of every message.
-- Failed is where a message ends (until "Deliver again"), so the index holds only those.
create index deliveries_failed_idx on deliveries (event_id) where state = 'failed';

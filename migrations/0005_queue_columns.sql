-- One column, one meaning. Until now a processing event's run_at was overwritten with the end
-- of its lease (and locked_until held the same instant), so run_at meant "due" for a pending
-- event and "lease ends" for a processing one. From now on:
--   run_at        when a pending event is due (first at arrival, later after a retry's backoff);
--   locked_until  when the lease of a processing event ends (null unless processing);
--   due_at        derived: the instant the queue may take the event, whichever applies.
-- The claim still finds due pending events and processing events whose lease ran out (their
-- worker died or hung) with one condition on one small index.

alter table events
  add column due_at timestamptz generated always as (
    case status when 'pending' then run_at when 'processing' then locked_until end
  ) stored;

drop index events_queue_idx;
create index events_queue_idx on events (due_at, id) where status in ('pending', 'processing');

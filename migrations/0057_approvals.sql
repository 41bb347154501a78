-- Approvals (a person before a tool): an event whose model asked for a tool marked
-- `approval: "always"` waits in `awaiting_approval`, out of the queue (due_at stays null, so
-- no worker claims it and it holds no slot), until an operator decides or the wait times out.
alter table events drop constraint events_status_check;
alter table events add constraint events_status_check
  check (status in ('pending', 'processing', 'awaiting_approval', 'replied', 'skipped', 'failed',
                    'rejected', 'filtered'));

-- events.approval: the call waiting, as shown ({tool, arguments, requested_at, expires_at});
-- null unless the event waits.
alter table events add column approval jsonb;
-- events.approval_expires_at: when the wait times out (the worker's sweep denies it then).
alter table events add column approval_expires_at timestamptz;
-- events.conversation: the attempt's conversation so far, kept while it waits and until the
-- attempt it continues ends (src/worker/parked-conversation.ts); never shown.
alter table events add column conversation jsonb;
-- events.approval_decisions: the decisions made in the current outcome ({tool, arguments,
-- decision, note}), so an attempt retried from its first round does not ask again.
alter table events add column approval_decisions jsonb not null default '[]';

-- The waiting events, for the sweep, the alert and Brain Logs' filter.
create index events_awaiting_approval_idx on events (approval_expires_at, id)
  where status = 'awaiting_approval';

-- The tool calls of an event's current outcome (src/worker/tool-rounds.ts): the last 50 of its
-- attempt, oldest first, each {round, tool, arguments, status, http_status, latency_ms, result}.
-- Written after each round of an attempt (with the lease renewed), emptied when an attempt starts
-- and when the event is replayed.
alter table events add column tool_calls jsonb not null default '[]';

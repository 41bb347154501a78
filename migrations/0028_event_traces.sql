-- Tracing (src/tracing/): the trace an event belongs to, when the receiver traced its webhook.
--
-- events.trace_id: the trace's id (32 hex digits), shown on the event (and linked from Brain
-- Logs) when the trace was sampled, so exported.
-- events.traceparent: the W3C traceparent of the `webhook receive` span, so that the worker
-- (perhaps another process) and reply delivery continue the same trace under it, sampled or not.
-- Both null when tracing was off. Nullable columns without defaults: adding them rewrites nothing.
alter table events add column trace_id text
  constraint events_trace_id_check check (trace_id ~ '^[0-9a-f]{32}$');
alter table events add column traceparent text;

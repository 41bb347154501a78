-- events.rejected_reply: the answer of the event's last attempt when the model's reply was
-- refused as `reply_invalid` (the channel's `response_format` is `json` or a JSON schema and the
-- reply did not fit), restored as a kept reply is when the guardrails restore placeholders, and
-- cut to its first 8,192 characters. For Brain Logs only, so an admin sees what the model answered;
-- the API's event object and the exports leave it out. Null for every other event, once a later
-- attempt replies or the event is replayed, and for events failed before this migration.
alter table events add column rejected_reply text;

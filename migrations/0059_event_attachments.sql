-- The images an event's channel named in its payload (ai.images) and what became of each:
-- [{path, url, media_type, bytes, status, error}], url without its query and fragment (null for
-- a data URL). The images themselves are never stored. Written by the worker once an attempt
-- has fetched them, emptied when an attempt starts and when the event is replayed.
alter table events add column attachments jsonb not null default '[]';

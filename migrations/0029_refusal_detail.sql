-- events.refusal_detail: the `detail` a refused sender was answered with (for
-- `signature_invalid`, which check failed: a missing header, no matching signature, an old
-- timestamp), so Brain Logs shows the exact cause instead of the code's general advice.
-- Null for every other event, and for refusals recorded before this migration.
alter table events add column refusal_detail text;

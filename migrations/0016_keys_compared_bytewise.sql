-- Dedup keys and thread keys are compared byte for byte (the "C" collation).
--
-- Both are opaque to the service: a sender's delivery id, a rendered thread key. They are only
-- ever compared for equality, where every deterministic collation already agrees with a
-- comparison of the bytes, so no query answers differently. But the unique index on a key is a
-- B-tree ordered by the column's collation, and under the database's locale each comparison of
-- its descent goes through the C library's strcoll: storing a keyed event cost PostgreSQL 55 µs
-- of CPU in a database created with en_US.UTF-8 (the locale of the official container image),
-- 46 µs with its key compared bytewise; 49 against 47 µs in a C.UTF-8 database (docs/scaling.md).
-- A thread key's two indexes (migrations/0009) compare the same way, and are not measured apart.
--
-- Only the indexes on the two columns are rebuilt; the table is not rewritten.
alter table events
  alter column dedup_key type text collate "C",
  alter column thread_key type text collate "C";

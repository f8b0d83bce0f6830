-- Nothing to change on SQLite: migration 0019 gives PostgreSQL a function
-- that runs a single-row creation in one round trip; on SQLite the same
-- steps already run on the request's thread (crates/store/src/sqlite/here.rs).
-- Both backends keep the same migration numbers (`cofre migrate` reports
-- one schema version), so this one is recorded here too.
SELECT 1;

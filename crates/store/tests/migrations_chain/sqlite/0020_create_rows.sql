-- Nothing to change on SQLite: migration 0020 gives PostgreSQL a function
-- that stores concurrent single-row creations in one call; on SQLite they
-- already share one transaction (crates/store/src/group_commit.rs).
-- Both backends keep the same migration numbers (`cofre migrate` reports
-- one schema version), so this one is recorded here too.
SELECT 1;

-- Nothing to change on SQLite: migration 0027 drops a PostgreSQL function
-- (cofre_create_row) no code calls. Both backends keep the same
-- migration numbers (`cofre migrate` reports one schema version), so this
-- one is recorded here too.
SELECT 1;

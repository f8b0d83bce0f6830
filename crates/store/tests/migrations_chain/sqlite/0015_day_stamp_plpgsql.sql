-- Nothing to change on SQLite: migration 0015 makes PostgreSQL's
-- cofre_stamp_day keep its plan between calls, and SQLite compiles its
-- trigger bodies (0014) into the statement that fires them. Both
-- backends keep the same migration numbers (`cofre migrate` reports one
-- schema version), so this one is recorded here too.
SELECT 1;

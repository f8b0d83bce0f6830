-- Nothing to change on SQLite: migration 0018 replaces PostgreSQL's eight
-- PL/pgSQL triggers a row fired with one, to cut the statements each runs;
-- SQLite compiles its trigger bodies into the statement that fires them
-- and a write runs on the request's thread without round trips. Both
-- backends keep the same migration numbers (`cofre migrate` reports one
-- schema version), so this one is recorded here too.
SELECT 1;

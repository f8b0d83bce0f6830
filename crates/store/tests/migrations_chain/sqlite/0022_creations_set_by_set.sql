-- Nothing to change on SQLite: migration 0022 lets PostgreSQL's call of
-- creations store its rows set by set. On SQLite each creation is a
-- savepoint of the writer's batch, run in-process, where a statement costs
-- no round trip. Both backends keep the same migration numbers (`cofre
-- migrate` reports one schema version), so this one is recorded here too.
SELECT 1;

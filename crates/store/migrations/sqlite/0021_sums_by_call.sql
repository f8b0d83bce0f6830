-- Nothing to change on SQLite: migration 0021 lets PostgreSQL's call of
-- creations (0020) add its rows to the sums once a call; on SQLite the
-- sums are kept by triggers running in-process, where a statement costs
-- no round trip. Both backends keep the same migration numbers (`cofre
-- migrate` reports one schema version), so this one is recorded here too.
SELECT 1;

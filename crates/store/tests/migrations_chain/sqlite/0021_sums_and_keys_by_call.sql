-- Nothing to change on SQLite: migration 0021 lets PostgreSQL's call of
-- creations (0020) add its rows to the sums once a call and check the API
-- key of a creation authenticated from memory. On SQLite the sums are kept
-- by triggers running in-process, where a statement costs no round trip,
-- and a key is read afresh in-process, so no request is authenticated from
-- memory. Both backends keep the same migration numbers (`cofre migrate`
-- reports one schema version), so this one is recorded here too.
SELECT 1;

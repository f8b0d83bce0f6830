-- Nothing to change on SQLite: migration 0022 lets PostgreSQL's call of
-- creations check the API key its request was authenticated with from
-- memory; on SQLite a key is read afresh in-process, without a round trip,
-- so no request is authenticated from memory. Both backends keep the same
-- migration numbers (`cofre migrate` reports one schema version), so this
-- one is recorded here too.
SELECT 1;

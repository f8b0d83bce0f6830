-- Nothing to change on SQLite: migration 0023 keeps PostgreSQL's day
-- totals for cards only, as they were the dearest sum a PostgreSQL call of
-- creations wrote (their indexed version makes every update of one write
-- both indexes again). SQLite's row triggers keep every account's day
-- totals as before; card reads use only cards'. Both backends keep the
-- same migration numbers (`cofre migrate` reports one schema version), so
-- this one is recorded here too.
SELECT 1;

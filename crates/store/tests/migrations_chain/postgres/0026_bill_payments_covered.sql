-- Nothing to change on PostgreSQL: SQLite now reads a card's bill payments
-- by an index of their own (migration 0026 there), because every reader's
-- page cache is emptied when the database changed and the payments, a
-- month apart in the table, were fetched from the file one page each.
-- PostgreSQL's shared buffers stay valid across writes, so its fetches of
-- those few rows read memory. Both backends keep the same migration
-- numbers (`cofre migrate` reports one schema version), so this one is
-- recorded here too.
SELECT 1;

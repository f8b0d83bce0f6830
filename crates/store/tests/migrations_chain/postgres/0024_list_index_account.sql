-- Nothing to change on PostgreSQL: SQLite's list index now carries each
-- row's account (migration 0024 there) so its cashflow view skips the
-- cards' rows without reading them; PostgreSQL checks a plain index
-- scan's other conditions on the table's row whatever the index holds.
-- Both backends keep the same migration numbers (`cofre migrate` reports
-- one schema version), so this one is recorded here too.
SELECT 1;

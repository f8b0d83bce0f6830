-- Nothing to change on PostgreSQL: SQLite's list index now keeps its days
-- ascending (migration 0025 there), because a history written day by day
-- left SQLite's index with the days descending half empty. PostgreSQL's
-- B-tree splits its pages well either way (eight users' ten years written
-- day by day: 1,131 index pages with the days descending, 1,067
-- ascending). Both backends keep the same migration numbers (`cofre
-- migrate` reports one schema version), so this one is recorded here too.
SELECT 1;

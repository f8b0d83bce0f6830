-- cofre_create_row (0019, redefined in 0020) has had no caller since
-- creations are stored by cofre_create_rows and cofre_create_set: one
-- copy fewer of the creation's steps to keep in step with the Rust path.
DROP FUNCTION IF EXISTS cofre_create_row(
    TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT, BOOLEAN, TEXT, BOOLEAN, TEXT,
    TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, BOOLEAN, BIGINT);

-- How many tags each row has, kept by the trigger below, so that a page
-- looks a row's tags up only when it has some (see the SQLite migration
-- of the same number).
ALTER TABLE transactions ADD COLUMN tag_count INTEGER NOT NULL DEFAULT 0;

UPDATE transactions t
SET tag_count = c.n
FROM (SELECT transaction_id, COUNT(*) AS n FROM transaction_tags GROUP BY transaction_id) c
WHERE c.transaction_id = t.id;

-- Links are only inserted and deleted (a row's tags are replaced by
-- deleting its links and inserting the new ones); deletes include those
-- a deleted tag or row cascades to (a deleted row's own update finds no
-- row).
CREATE FUNCTION cofre_transaction_tags_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE transactions SET tag_count = tag_count - 1 WHERE id = OLD.transaction_id;
    ELSE
        UPDATE transactions SET tag_count = tag_count + 1 WHERE id = NEW.transaction_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER transaction_tags_count
AFTER INSERT OR DELETE ON transaction_tags
FOR EACH ROW EXECUTE FUNCTION cofre_transaction_tags_count();

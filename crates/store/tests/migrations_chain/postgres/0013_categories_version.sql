-- users.categories_version: bumped by any change to the categories a user
-- sees (their own, and which ones they archived), so the list can be kept
-- in memory and read again only after such a change (issue 12: the
-- overview and every budget status list them). The shared categories
-- (user_id NULL) change only in migrations; a migration that changes
-- them must bump every user's categories_version.
ALTER TABLE users ADD COLUMN categories_version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION cofre_categories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE users SET categories_version = categories_version + 1 WHERE id = OLD.user_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
        UPDATE users SET categories_version = categories_version + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER categories_version AFTER INSERT OR UPDATE OR DELETE ON categories
FOR EACH ROW EXECUTE FUNCTION cofre_categories_changed();
CREATE TRIGGER category_archives_version AFTER INSERT OR UPDATE OR DELETE ON category_archives
FOR EACH ROW EXECUTE FUNCTION cofre_categories_changed();

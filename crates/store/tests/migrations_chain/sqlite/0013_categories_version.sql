-- users.categories_version: bumped by any change to the categories a user
-- sees (their own, and which ones they archived), so the list can be kept
-- in memory and read again only after such a change (issue 12: the
-- overview and every budget status list them). The shared categories
-- (user_id NULL) change only in migrations; a migration that changes
-- them must bump every user's categories_version.
ALTER TABLE users ADD COLUMN categories_version BIGINT NOT NULL DEFAULT 0;

CREATE TRIGGER categories_version_insert AFTER INSERT ON categories
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER categories_version_update AFTER UPDATE ON categories
BEGIN
    UPDATE users SET categories_version = categories_version + 1
    WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER categories_version_delete AFTER DELETE ON categories
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER category_archives_version_insert AFTER INSERT ON category_archives
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER category_archives_version_update AFTER UPDATE ON category_archives
BEGIN
    UPDATE users SET categories_version = categories_version + 1
    WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER category_archives_version_delete AFTER DELETE ON category_archives
BEGIN
    UPDATE users SET categories_version = categories_version + 1 WHERE id = OLD.user_id;
END;

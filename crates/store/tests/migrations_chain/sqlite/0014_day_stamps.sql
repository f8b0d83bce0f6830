-- A stamp per user and day that moves whenever a stored row of that day
-- changes (the row, or the tags on it), so a kept page of the merged view
-- can be checked against the days it shows instead of being dropped on
-- every write of its user: a purchase today leaves the pages of last week
-- as they were (issue 12, reads while writing).
--
-- A stamp is the view_version of the write that made the change: every
-- write bumps its user's view_version as its first statement
-- (`begin_write` in the store, the one place that bumps it), so the stamp
-- is greater than the view_version any answer was computed at before the
-- write committed, and "no stamp of these days above v" says no write
-- after v touched them. Stamps only grow and are deleted only with
-- their user; a day without a stamp has had no change since this table
-- was made (answers kept in memory then were dropped with the restart
-- that ran this migration).
CREATE TABLE user_day_stamps (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    stamp BIGINT NOT NULL,
    CONSTRAINT user_day_stamps_pk PRIMARY KEY (user_id, day)
) WITHOUT ROWID;

CREATE TRIGGER transactions_day_stamp_insert AFTER INSERT ON transactions
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT NEW.user_id, NEW.date, u.view_version FROM users u WHERE u.id = NEW.user_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

CREATE TRIGGER transactions_day_stamp_update AFTER UPDATE ON transactions
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT OLD.user_id, OLD.date, u.view_version FROM users u
    WHERE u.id = OLD.user_id AND (OLD.user_id IS NOT NEW.user_id OR OLD.date IS NOT NEW.date)
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT NEW.user_id, NEW.date, u.view_version FROM users u WHERE u.id = NEW.user_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

CREATE TRIGGER transactions_day_stamp_delete AFTER DELETE ON transactions
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT OLD.user_id, OLD.date, u.view_version FROM users u WHERE u.id = OLD.user_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

-- A row's tags are part of the row as a page shows it. (When the row
-- itself is deleted, its delete above already stamped the day.)
CREATE TRIGGER transaction_tags_day_stamp_insert AFTER INSERT ON transaction_tags
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT t.user_id, t.date, u.view_version
    FROM transactions t JOIN users u ON u.id = t.user_id WHERE t.id = NEW.transaction_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

CREATE TRIGGER transaction_tags_day_stamp_delete AFTER DELETE ON transaction_tags
BEGIN
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT t.user_id, t.date, u.view_version
    FROM transactions t JOIN users u ON u.id = t.user_id WHERE t.id = OLD.transaction_id
    ON CONFLICT (user_id, day) DO UPDATE SET stamp = MAX(stamp, excluded.stamp);
END;

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
    day TEXT COLLATE "C" NOT NULL,
    stamp BIGINT NOT NULL,
    CONSTRAINT user_day_stamps_pk PRIMARY KEY (user_id, day)
);

CREATE FUNCTION cofre_stamp_day(owner TEXT, on_day TEXT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO user_day_stamps (user_id, day, stamp)
    SELECT owner, on_day, u.view_version FROM users u WHERE u.id = owner
    ON CONFLICT (user_id, day) DO UPDATE
    SET stamp = GREATEST(user_day_stamps.stamp, EXCLUDED.stamp);
$$;

CREATE FUNCTION cofre_transactions_day_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM cofre_stamp_day(OLD.user_id, OLD.date);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM cofre_stamp_day(NEW.user_id, NEW.date);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER transactions_day_stamp
AFTER INSERT OR UPDATE OR DELETE ON transactions
FOR EACH ROW EXECUTE FUNCTION cofre_transactions_day_stamp();

-- A row's tags are part of the row as a page shows it. (When the row
-- itself is deleted, its delete above already stamped the day.)
CREATE FUNCTION cofre_transaction_tags_day_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tagged TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN
        tagged := OLD.transaction_id;
    ELSE
        tagged := NEW.transaction_id;
    END IF;
    PERFORM cofre_stamp_day(t.user_id, t.date) FROM transactions t WHERE t.id = tagged;
    RETURN NULL;
END $$;

CREATE TRIGGER transaction_tags_day_stamp
AFTER INSERT OR DELETE ON transaction_tags
FOR EACH ROW EXECUTE FUNCTION cofre_transaction_tags_day_stamp();

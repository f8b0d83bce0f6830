-- A stamp per user and month that moves whenever any of the user's
-- category sums of that month (user_category_month_totals, 0011) changes,
-- so a reader can keep a month's sums and reload only the months whose
-- stamp moved: a purchase today changes this month's sums, not the twelve
-- before it that a rollover budget also reads (issue 12).
--
-- Stamps only grow and are never deleted while the user exists (their
-- sums are never deleted either: they fall to zero), so a stamp seen once
-- names one state of its month for good. A month without a stamp has no
-- sums.
CREATE TABLE user_month_stamps (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    stamp BIGINT NOT NULL,
    CONSTRAINT user_month_stamps_pk PRIMARY KEY (user_id, month)
) WITHOUT ROWID;

INSERT INTO user_month_stamps (user_id, month, stamp)
SELECT DISTINCT user_id, month, 1 FROM user_category_month_totals;

-- An upsert into the sums fires the insert trigger or the update one.
CREATE TRIGGER user_category_month_totals_stamp_insert AFTER INSERT ON user_category_month_totals
BEGIN
    INSERT INTO user_month_stamps (user_id, month, stamp) VALUES (NEW.user_id, NEW.month, 1)
    ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
END;

CREATE TRIGGER user_category_month_totals_stamp_update AFTER UPDATE ON user_category_month_totals
BEGIN
    INSERT INTO user_month_stamps (user_id, month, stamp)
    SELECT OLD.user_id, OLD.month, 1 WHERE OLD.user_id IS NOT NEW.user_id OR OLD.month IS NOT NEW.month
    ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
    INSERT INTO user_month_stamps (user_id, month, stamp) VALUES (NEW.user_id, NEW.month, 1)
    ON CONFLICT (user_id, month) DO UPDATE SET stamp = user_month_stamps.stamp + 1;
END;

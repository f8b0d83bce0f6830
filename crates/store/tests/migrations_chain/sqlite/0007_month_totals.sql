-- Each account's visible rows summed per calendar month, type, status and
-- kind, kept up to date by triggers: the overview's month reads a few
-- dozen of them instead of summing every row of the month, so its cost
-- does not grow with how many rows a month holds. `month` is the date's
-- 'YYYY-MM'; `kind` is 'installment' (a plan's row), 'recurrence' (a
-- rule's row) or 'plain'. Rows hidden from results count nowhere. Totals
-- that fall to zero are kept (as in day_totals); readers skip them.
CREATE TABLE month_totals (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    kind TEXT NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT month_totals_pk PRIMARY KEY (account_id, month, type, status, kind)
);

INSERT INTO month_totals (account_id, month, type, status, kind, cents)
SELECT account_id, substr(date, 1, 7), type, status,
    CASE WHEN installment_purchase_id IS NOT NULL THEN 'installment'
         WHEN recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END,
    SUM(amount_cents)
FROM transactions WHERE hide_from_results = FALSE
GROUP BY account_id, substr(date, 1, 7), type, status,
    CASE WHEN installment_purchase_id IS NOT NULL THEN 'installment'
         WHEN recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END;

CREATE TRIGGER transactions_month_insert AFTER INSERT ON transactions
WHEN NEW.hide_from_results = FALSE
BEGIN
    INSERT INTO month_totals (account_id, month, type, status, kind, cents)
    VALUES (NEW.account_id, substr(NEW.date, 1, 7), NEW.type, NEW.status,
        CASE WHEN NEW.installment_purchase_id IS NOT NULL THEN 'installment'
             WHEN NEW.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END,
        NEW.amount_cents)
    ON CONFLICT (account_id, month, type, status, kind)
    DO UPDATE SET cents = month_totals.cents + excluded.cents;
END;

CREATE TRIGGER transactions_month_delete AFTER DELETE ON transactions
WHEN OLD.hide_from_results = FALSE
BEGIN
    UPDATE month_totals SET cents = cents - OLD.amount_cents
    WHERE account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND type = OLD.type AND status = OLD.status
      AND kind = CASE WHEN OLD.installment_purchase_id IS NOT NULL THEN 'installment'
                      WHEN OLD.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END;
END;

CREATE TRIGGER transactions_month_update AFTER UPDATE OF account_id, date, type, status, amount_cents,
    installment_purchase_id, recurrence_id, hide_from_results ON transactions
BEGIN
    UPDATE month_totals SET cents = cents - OLD.amount_cents
    WHERE OLD.hide_from_results = FALSE
      AND account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND type = OLD.type AND status = OLD.status
      AND kind = CASE WHEN OLD.installment_purchase_id IS NOT NULL THEN 'installment'
                      WHEN OLD.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END;
    -- The WHERE also keeps SQLite from reading ON CONFLICT as a join's ON.
    INSERT INTO month_totals (account_id, month, type, status, kind, cents)
    SELECT NEW.account_id, substr(NEW.date, 1, 7), NEW.type, NEW.status,
        CASE WHEN NEW.installment_purchase_id IS NOT NULL THEN 'installment'
             WHEN NEW.recurrence_id IS NOT NULL THEN 'recurrence' ELSE 'plain' END,
        NEW.amount_cents
    WHERE NEW.hide_from_results = FALSE
    ON CONFLICT (account_id, month, type, status, kind)
    DO UPDATE SET cents = month_totals.cents + excluded.cents;
END;

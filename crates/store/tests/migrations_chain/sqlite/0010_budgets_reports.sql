-- Budgets and the totals reports read (issue 13).
--
-- budgets: a monthly limit for one category from `starts_on` to `ends_on`
-- (months as 'YYYY-MM', ends_on NULL: no end); budget_limits keeps every
-- change of the limit, each in force from its month until the next, so a
-- change from a month on leaves earlier months as they were.
CREATE TABLE budgets (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    category_id TEXT NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
    include_subcategories BOOLEAN NOT NULL,
    rollover BOOLEAN NOT NULL,
    starts_on TEXT NOT NULL,
    ends_on TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX budgets_user ON budgets (user_id, category_id);

CREATE TABLE budget_limits (
    budget_id TEXT NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
    from_month TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    CONSTRAINT budget_limits_pk PRIMARY KEY (budget_id, from_month)
) WITHOUT ROWID;

-- Each account's visible rows summed per calendar month, category ('' for
-- none), type, status and whether the row is a leg of a transfer or bill
-- payment: budgets and spending reports read a few hundred of these
-- instead of every row of their months. Kept by triggers, like
-- month_totals (0007); totals that fall to zero are kept, readers skip them.
-- On SQLite the totals tables are WITHOUT ROWID: ordered by their key, a
-- range of it is read without a lookup per row.
CREATE TABLE category_month_totals (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    category_id TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    transfer BOOLEAN NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT category_month_totals_pk PRIMARY KEY (account_id, month, category_id, type, status, transfer)
) WITHOUT ROWID;

INSERT INTO category_month_totals (account_id, month, category_id, type, status, transfer, cents)
SELECT account_id, substr(date, 1, 7), COALESCE(category_id, ''), type, status,
    transfer_group_id IS NOT NULL, SUM(amount_cents)
FROM transactions WHERE hide_from_results = FALSE
GROUP BY account_id, substr(date, 1, 7), COALESCE(category_id, ''), type, status,
    transfer_group_id IS NOT NULL;

CREATE TRIGGER transactions_category_insert AFTER INSERT ON transactions
WHEN NEW.hide_from_results = FALSE
BEGIN
    INSERT INTO category_month_totals (account_id, month, category_id, type, status, transfer, cents)
    VALUES (NEW.account_id, substr(NEW.date, 1, 7), COALESCE(NEW.category_id, ''), NEW.type,
        NEW.status, NEW.transfer_group_id IS NOT NULL, NEW.amount_cents)
    ON CONFLICT (account_id, month, category_id, type, status, transfer)
    DO UPDATE SET cents = category_month_totals.cents + excluded.cents;
END;

CREATE TRIGGER transactions_category_delete AFTER DELETE ON transactions
WHEN OLD.hide_from_results = FALSE
BEGIN
    UPDATE category_month_totals SET cents = cents - OLD.amount_cents
    WHERE account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND category_id = COALESCE(OLD.category_id, '') AND type = OLD.type
      AND status = OLD.status AND transfer = (OLD.transfer_group_id IS NOT NULL);
END;

CREATE TRIGGER transactions_category_update AFTER UPDATE OF account_id, date, type, status,
    amount_cents, category_id, transfer_group_id, hide_from_results ON transactions
BEGIN
    UPDATE category_month_totals SET cents = cents - OLD.amount_cents
    WHERE OLD.hide_from_results = FALSE
      AND account_id = OLD.account_id AND month = substr(OLD.date, 1, 7)
      AND category_id = COALESCE(OLD.category_id, '') AND type = OLD.type
      AND status = OLD.status AND transfer = (OLD.transfer_group_id IS NOT NULL);
    -- The WHERE also keeps SQLite from reading ON CONFLICT as a join's ON.
    INSERT INTO category_month_totals (account_id, month, category_id, type, status, transfer, cents)
    SELECT NEW.account_id, substr(NEW.date, 1, 7), COALESCE(NEW.category_id, ''), NEW.type,
        NEW.status, NEW.transfer_group_id IS NOT NULL, NEW.amount_cents
    WHERE NEW.hide_from_results = FALSE
    ON CONFLICT (account_id, month, category_id, type, status, transfer)
    DO UPDATE SET cents = category_month_totals.cents + excluded.cents;
END;

-- Each account's POSTED rows (hidden ones too: transfers move money)
-- summed per day, CREDIT adding and DEBIT subtracting: a balance at any
-- date is the account's balance minus the days after it, so a year of
-- daily balances reads at most a year of these per account.
CREATE TABLE day_balances (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT day_balances_pk PRIMARY KEY (account_id, date)
) WITHOUT ROWID;

INSERT INTO day_balances (account_id, date, cents)
SELECT account_id, date, SUM(CASE WHEN type = 'CREDIT' THEN amount_cents ELSE -amount_cents END)
FROM transactions WHERE status = 'POSTED'
GROUP BY account_id, date;

CREATE TRIGGER transactions_day_balance_insert AFTER INSERT ON transactions
WHEN NEW.status = 'POSTED'
BEGIN
    INSERT INTO day_balances (account_id, date, cents)
    VALUES (NEW.account_id, NEW.date,
        CASE WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END)
    ON CONFLICT (account_id, date) DO UPDATE SET cents = day_balances.cents + excluded.cents;
END;

CREATE TRIGGER transactions_day_balance_delete AFTER DELETE ON transactions
WHEN OLD.status = 'POSTED'
BEGIN
    UPDATE day_balances
    SET cents = cents - CASE WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END
    WHERE account_id = OLD.account_id AND date = OLD.date;
END;

CREATE TRIGGER transactions_day_balance_update AFTER UPDATE OF account_id, date, type, status,
    amount_cents ON transactions
BEGIN
    UPDATE day_balances
    SET cents = cents - CASE WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END
    WHERE OLD.status = 'POSTED' AND account_id = OLD.account_id AND date = OLD.date;
    INSERT INTO day_balances (account_id, date, cents)
    SELECT NEW.account_id, NEW.date,
        CASE WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END
    WHERE NEW.status = 'POSTED'
    ON CONFLICT (account_id, date) DO UPDATE SET cents = day_balances.cents + excluded.cents;
END;

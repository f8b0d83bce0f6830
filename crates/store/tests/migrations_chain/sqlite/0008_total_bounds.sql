-- Every running total stays inside +-10^15 cents (10,000,000,000,000.00),
-- the bound cofre documents (cofre_domain::money::MAX_TOTAL_CENTS). A row is
-- at most 99,999,999,999.99, so a total one row past the bound is still far
-- inside a 64-bit integer: SQLite never turns the sum into a REAL and
-- PostgreSQL never overflows BIGINT. The write that would cross the bound
-- fails on the named constraint, which the store reports as a field error.
--
-- SQLite cannot add a CHECK to an existing table, so the three tables are
-- rebuilt; the triggers that write them are dropped first (a rename would
-- otherwise trip over them) and recreated unchanged from 0006 and 0007.
DROP TRIGGER accounts_balance_row;
DROP TRIGGER transactions_totals_insert;
DROP TRIGGER transactions_totals_delete;
DROP TRIGGER transactions_totals_update;
DROP TRIGGER transactions_month_insert;
DROP TRIGGER transactions_month_delete;
DROP TRIGGER transactions_month_update;

CREATE TABLE account_balances_new (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    posted_cents BIGINT NOT NULL
        CONSTRAINT account_balances_posted_cents_range
        CHECK (posted_cents BETWEEN -1000000000000000 AND 1000000000000000)
);
INSERT INTO account_balances_new (account_id, posted_cents)
SELECT account_id, posted_cents FROM account_balances;
DROP TABLE account_balances;
ALTER TABLE account_balances_new RENAME TO account_balances;

CREATE TABLE day_totals_new (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    type TEXT NOT NULL,
    installment BOOLEAN NOT NULL,
    cents BIGINT NOT NULL
        CONSTRAINT day_totals_cents_range
        CHECK (cents BETWEEN -1000000000000000 AND 1000000000000000),
    CONSTRAINT day_totals_pk PRIMARY KEY (account_id, date, type, installment)
);
INSERT INTO day_totals_new (account_id, date, type, installment, cents)
SELECT account_id, date, type, installment, cents FROM day_totals;
DROP TABLE day_totals;
ALTER TABLE day_totals_new RENAME TO day_totals;

CREATE TABLE month_totals_new (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    kind TEXT NOT NULL,
    cents BIGINT NOT NULL
        CONSTRAINT month_totals_cents_range
        CHECK (cents BETWEEN -1000000000000000 AND 1000000000000000),
    CONSTRAINT month_totals_pk PRIMARY KEY (account_id, month, type, status, kind)
);
INSERT INTO month_totals_new (account_id, month, type, status, kind, cents)
SELECT account_id, month, type, status, kind, cents FROM month_totals;
DROP TABLE month_totals;
ALTER TABLE month_totals_new RENAME TO month_totals;

CREATE TRIGGER accounts_balance_row AFTER INSERT ON accounts
BEGIN
    INSERT INTO account_balances (account_id, posted_cents) VALUES (NEW.id, 0);
END;

CREATE TRIGGER transactions_totals_insert AFTER INSERT ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents + CASE WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END
    WHERE account_id = NEW.account_id AND NEW.status = 'POSTED';
    INSERT OR IGNORE INTO day_totals (account_id, date, type, installment, cents)
    SELECT NEW.account_id, NEW.date, NEW.type, NEW.installment_purchase_id IS NOT NULL, 0
    WHERE NEW.bill_month IS NULL;
    UPDATE day_totals SET cents = cents + NEW.amount_cents
    WHERE NEW.bill_month IS NULL AND account_id = NEW.account_id AND date = NEW.date
      AND type = NEW.type AND installment = (NEW.installment_purchase_id IS NOT NULL);
END;

CREATE TRIGGER transactions_totals_delete AFTER DELETE ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents - CASE WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END
    WHERE account_id = OLD.account_id AND OLD.status = 'POSTED';
    UPDATE day_totals SET cents = cents - OLD.amount_cents
    WHERE OLD.bill_month IS NULL AND account_id = OLD.account_id AND date = OLD.date
      AND type = OLD.type AND installment = (OLD.installment_purchase_id IS NOT NULL);
END;

CREATE TRIGGER transactions_totals_update AFTER UPDATE OF account_id, date, type, status, amount_cents,
    installment_purchase_id, bill_month ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents - CASE WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END
    WHERE account_id = OLD.account_id AND OLD.status = 'POSTED';
    UPDATE account_balances
    SET posted_cents = posted_cents + CASE WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END
    WHERE account_id = NEW.account_id AND NEW.status = 'POSTED';
    UPDATE day_totals SET cents = cents - OLD.amount_cents
    WHERE OLD.bill_month IS NULL AND account_id = OLD.account_id AND date = OLD.date
      AND type = OLD.type AND installment = (OLD.installment_purchase_id IS NOT NULL);
    INSERT OR IGNORE INTO day_totals (account_id, date, type, installment, cents)
    SELECT NEW.account_id, NEW.date, NEW.type, NEW.installment_purchase_id IS NOT NULL, 0
    WHERE NEW.bill_month IS NULL;
    UPDATE day_totals SET cents = cents + NEW.amount_cents
    WHERE NEW.bill_month IS NULL AND account_id = NEW.account_id AND date = NEW.date
      AND type = NEW.type AND installment = (NEW.installment_purchase_id IS NOT NULL);
END;

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

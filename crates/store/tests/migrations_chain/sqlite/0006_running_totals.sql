-- Totals kept up to date by triggers, so reads never sum a whole history:
-- each account's balance (its POSTED rows, CREDIT adds, DEBIT subtracts)
-- and each account's rows summed per day, type and kind (installment or
-- not), payment legs of card bills apart: what card bills are made of.
CREATE TABLE account_balances (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    posted_cents BIGINT NOT NULL
);

CREATE TABLE day_totals (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date TEXT NOT NULL,
    type TEXT NOT NULL,
    installment BOOLEAN NOT NULL,
    cents BIGINT NOT NULL,
    CONSTRAINT day_totals_pk PRIMARY KEY (account_id, date, type, installment)
);

INSERT INTO account_balances (account_id, posted_cents)
SELECT a.id, COALESCE((SELECT SUM(CASE WHEN t.type = 'CREDIT' THEN t.amount_cents ELSE -t.amount_cents END)
    FROM transactions t WHERE t.account_id = a.id AND t.status = 'POSTED'), 0)
FROM accounts a;

INSERT INTO day_totals (account_id, date, type, installment, cents)
SELECT account_id, date, type, installment_purchase_id IS NOT NULL, SUM(amount_cents)
FROM transactions WHERE bill_month IS NULL
GROUP BY account_id, date, type, installment_purchase_id IS NOT NULL;

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

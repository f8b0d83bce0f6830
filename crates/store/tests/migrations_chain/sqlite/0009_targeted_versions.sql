-- Versions that say what a write changed, so readers reload only that
-- (every write still bumps users.view_version, which whole responses are
-- cached under):
-- - users.sources_version: bumped by any change to what projections are
--   made from (rules, plans, accounts, tags, tombstones, and the stored
--   rows that replace a rule's or a plan's entry); a plain purchase
--   leaves it, so cached projection sources stay valid.
-- - account_balances.money_version: bumped by any change to a row on the
--   account or billed to it (a payment's bank leg names the card in
--   bill_to_account_id).
-- - day_totals.version: the account's money_version when the total last
--   changed, so a reader that holds a card's totals at version v reloads
--   only the days changed since: `version > v`, by index. Totals are never
--   deleted (they fall to zero), so those rows are the whole difference.
ALTER TABLE users ADD COLUMN sources_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE account_balances ADD COLUMN money_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE day_totals ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX day_totals_version ON day_totals (account_id, version);

-- The totals triggers of 0008, each also bumping the money version of
-- every account the row is on or billed to, and stamping the day totals
-- it changes with that version (0 when the account's balance row is
-- already gone: an account being deleted takes its totals with it).
DROP TRIGGER transactions_totals_insert;
DROP TRIGGER transactions_totals_delete;
DROP TRIGGER transactions_totals_update;

CREATE TRIGGER transactions_totals_insert AFTER INSERT ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents + CASE WHEN NEW.status <> 'POSTED' THEN 0
            WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = NEW.account_id;
    UPDATE account_balances SET money_version = money_version + 1
    WHERE account_id = NEW.bill_to_account_id AND NEW.bill_to_account_id <> NEW.account_id;
    INSERT OR IGNORE INTO day_totals (account_id, date, type, installment, cents)
    SELECT NEW.account_id, NEW.date, NEW.type, NEW.installment_purchase_id IS NOT NULL, 0
    WHERE NEW.bill_month IS NULL;
    UPDATE day_totals SET cents = cents + NEW.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = NEW.account_id), 0)
    WHERE NEW.bill_month IS NULL AND account_id = NEW.account_id AND date = NEW.date
      AND type = NEW.type AND installment = (NEW.installment_purchase_id IS NOT NULL);
END;

CREATE TRIGGER transactions_totals_delete AFTER DELETE ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents - CASE WHEN OLD.status <> 'POSTED' THEN 0
            WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = OLD.account_id;
    UPDATE account_balances SET money_version = money_version + 1
    WHERE account_id = OLD.bill_to_account_id AND OLD.bill_to_account_id <> OLD.account_id;
    UPDATE day_totals SET cents = cents - OLD.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = OLD.account_id), 0)
    WHERE OLD.bill_month IS NULL AND account_id = OLD.account_id AND date = OLD.date
      AND type = OLD.type AND installment = (OLD.installment_purchase_id IS NOT NULL);
END;

CREATE TRIGGER transactions_totals_update AFTER UPDATE OF account_id, date, type, status, amount_cents,
    installment_purchase_id, bill_month, bill_to_account_id ON transactions
BEGIN
    UPDATE account_balances
    SET posted_cents = posted_cents - CASE WHEN OLD.status <> 'POSTED' THEN 0
            WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = OLD.account_id;
    UPDATE account_balances
    SET posted_cents = posted_cents + CASE WHEN NEW.status <> 'POSTED' THEN 0
            WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END,
        money_version = money_version + 1
    WHERE account_id = NEW.account_id;
    UPDATE account_balances SET money_version = money_version + 1
    WHERE account_id IN (OLD.bill_to_account_id, NEW.bill_to_account_id);
    UPDATE day_totals SET cents = cents - OLD.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = OLD.account_id), 0)
    WHERE OLD.bill_month IS NULL AND account_id = OLD.account_id AND date = OLD.date
      AND type = OLD.type AND installment = (OLD.installment_purchase_id IS NOT NULL);
    INSERT OR IGNORE INTO day_totals (account_id, date, type, installment, cents)
    SELECT NEW.account_id, NEW.date, NEW.type, NEW.installment_purchase_id IS NOT NULL, 0
    WHERE NEW.bill_month IS NULL;
    UPDATE day_totals SET cents = cents + NEW.amount_cents,
        version = COALESCE((SELECT money_version FROM account_balances WHERE account_id = NEW.account_id), 0)
    WHERE NEW.bill_month IS NULL AND account_id = NEW.account_id AND date = NEW.date
      AND type = NEW.type AND installment = (NEW.installment_purchase_id IS NOT NULL);
END;

-- What projections are made from: any change bumps the owner's
-- sources_version.
CREATE TRIGGER recurrence_rules_sources_insert AFTER INSERT ON recurrence_rules
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER recurrence_rules_sources_update AFTER UPDATE ON recurrence_rules
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER recurrence_rules_sources_delete AFTER DELETE ON recurrence_rules
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER installment_plans_sources_insert AFTER INSERT ON installment_plans
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER installment_plans_sources_update AFTER UPDATE ON installment_plans
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER installment_plans_sources_delete AFTER DELETE ON installment_plans
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER accounts_sources_insert AFTER INSERT ON accounts
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER accounts_sources_update AFTER UPDATE ON accounts
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER accounts_sources_delete AFTER DELETE ON accounts
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER tags_sources_insert AFTER INSERT ON tags
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER tags_sources_update AFTER UPDATE ON tags
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER tags_sources_delete AFTER DELETE ON tags
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

CREATE TRIGGER tombstones_sources_insert AFTER INSERT ON tombstones
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER tombstones_sources_update AFTER UPDATE ON tombstones
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER tombstones_sources_delete AFTER DELETE ON tombstones
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

-- A stored row that replaces a rule's or a plan's entry.
CREATE TRIGGER transactions_sources_insert AFTER INSERT ON transactions
WHEN NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER transactions_sources_update AFTER UPDATE OF user_id, recurrence_id, recurrence_period_date,
    installment_purchase_id, installment_number ON transactions
WHEN OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL
  OR NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER transactions_sources_delete AFTER DELETE ON transactions
WHEN OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL
BEGIN
    UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
END;

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

-- The totals trigger of 0006, also bumping the money version of every
-- account the row is on or billed to, and stamping the day totals it
-- changes with that version (0 when the account's balance row is already
-- gone: an account being deleted takes its totals with it).
CREATE OR REPLACE FUNCTION cofre_transaction_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    stamp BIGINT;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE account_balances
        SET posted_cents = posted_cents - CASE WHEN OLD.status <> 'POSTED' THEN 0
                WHEN OLD.type = 'CREDIT' THEN OLD.amount_cents ELSE -OLD.amount_cents END,
            money_version = money_version + 1
        WHERE account_id = OLD.account_id
        RETURNING money_version INTO stamp;
        IF OLD.bill_to_account_id <> OLD.account_id THEN
            UPDATE account_balances SET money_version = money_version + 1
            WHERE account_id = OLD.bill_to_account_id;
        END IF;
        IF OLD.bill_month IS NULL THEN
            UPDATE day_totals SET cents = cents - OLD.amount_cents, version = COALESCE(stamp, 0)
            WHERE account_id = OLD.account_id AND date = OLD.date AND type = OLD.type
              AND installment = (OLD.installment_purchase_id IS NOT NULL);
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE account_balances
        SET posted_cents = posted_cents + CASE WHEN NEW.status <> 'POSTED' THEN 0
                WHEN NEW.type = 'CREDIT' THEN NEW.amount_cents ELSE -NEW.amount_cents END,
            money_version = money_version + 1
        WHERE account_id = NEW.account_id
        RETURNING money_version INTO stamp;
        IF NEW.bill_to_account_id <> NEW.account_id THEN
            UPDATE account_balances SET money_version = money_version + 1
            WHERE account_id = NEW.bill_to_account_id;
        END IF;
        IF NEW.bill_month IS NULL THEN
            INSERT INTO day_totals (account_id, date, type, installment, cents, version)
            VALUES (NEW.account_id, NEW.date, NEW.type, NEW.installment_purchase_id IS NOT NULL,
                NEW.amount_cents, COALESCE(stamp, 0))
            ON CONFLICT (account_id, date, type, installment)
            DO UPDATE SET cents = day_totals.cents + EXCLUDED.cents, version = EXCLUDED.version;
        END IF;
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER transactions_totals ON transactions;
CREATE TRIGGER transactions_totals
AFTER INSERT OR DELETE OR UPDATE OF account_id, date, type, status, amount_cents, installment_purchase_id,
    bill_month, bill_to_account_id
ON transactions FOR EACH ROW EXECUTE FUNCTION cofre_transaction_totals();

-- What projections are made from: any change bumps the owner's
-- sources_version.
CREATE FUNCTION cofre_sources_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE users SET sources_version = sources_version + 1 WHERE id = OLD.user_id;
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
        UPDATE users SET sources_version = sources_version + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER recurrence_rules_sources AFTER INSERT OR UPDATE OR DELETE ON recurrence_rules
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER installment_plans_sources AFTER INSERT OR UPDATE OR DELETE ON installment_plans
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER accounts_sources AFTER INSERT OR UPDATE OR DELETE ON accounts
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER tags_sources AFTER INSERT OR UPDATE OR DELETE ON tags
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER tombstones_sources AFTER INSERT OR UPDATE OR DELETE ON tombstones
FOR EACH ROW EXECUTE FUNCTION cofre_sources_changed();

-- A stored row that replaces a rule's or a plan's entry.
CREATE TRIGGER transactions_sources_insert AFTER INSERT ON transactions
FOR EACH ROW WHEN (NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL)
EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER transactions_sources_update
AFTER UPDATE OF user_id, recurrence_id, recurrence_period_date, installment_purchase_id, installment_number
ON transactions
FOR EACH ROW WHEN (OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL
    OR NEW.recurrence_id IS NOT NULL OR NEW.installment_purchase_id IS NOT NULL)
EXECUTE FUNCTION cofre_sources_changed();
CREATE TRIGGER transactions_sources_delete AFTER DELETE ON transactions
FOR EACH ROW WHEN (OLD.recurrence_id IS NOT NULL OR OLD.installment_purchase_id IS NOT NULL)
EXECUTE FUNCTION cofre_sources_changed();

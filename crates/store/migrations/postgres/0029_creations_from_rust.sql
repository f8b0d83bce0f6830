-- Creations are stored by the store's Rust code on both backends
-- (crates/store/src/sql_store/create_set.rs): PostgreSQL's copy of their
-- rules in PL/pgSQL goes. The rows a statement inserts are added to the
-- running totals once, by a statement trigger (set by set, as the call
-- of creations did), so the row trigger keeps the sums only of rows
-- changed or deleted, and no write stands it aside any more.

DROP FUNCTION cofre_create_rows(TEXT, BIGINT);
DROP FUNCTION cofre_create_set(JSONB, TIMESTAMPTZ);
DROP FUNCTION cofre_create_one(TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT,
    BOOLEAN, TEXT, BOOLEAN, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, BOOLEAN,
    TIMESTAMPTZ, BOOLEAN);
DROP TYPE cofre_creation;

-- What a changed or deleted row adds to the sums: the old row taken out
-- and the new one put in, each part only when a column it depends on
-- changed (the day is stamped always: any change of a row changes its
-- day's pages).
CREATE OR REPLACE FUNCTION cofre_transaction_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    totals BOOLEAN := TRUE;
    months BOOLEAN := TRUE;
    categories BOOLEAN := TRUE;
    days BOOLEAN := TRUE;
    counted BOOLEAN;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        days := (OLD.account_id, OLD.date, OLD.type, OLD.status, OLD.amount_cents)
            IS DISTINCT FROM (NEW.account_id, NEW.date, NEW.type, NEW.status, NEW.amount_cents);
        totals := days OR (OLD.installment_purchase_id, OLD.bill_month, OLD.bill_to_account_id)
            IS DISTINCT FROM (NEW.installment_purchase_id, NEW.bill_month, NEW.bill_to_account_id);
        months := days OR (OLD.installment_purchase_id, OLD.recurrence_id, OLD.hide_from_results)
            IS DISTINCT FROM (NEW.installment_purchase_id, NEW.recurrence_id, NEW.hide_from_results);
        categories := days OR (OLD.category_id, OLD.transfer_group_id, OLD.hide_from_results)
            IS DISTINCT FROM (NEW.category_id, NEW.transfer_group_id, NEW.hide_from_results);
    END IF;
    counted := cofre_transaction_row_add(OLD, -1, totals, months, categories, days);
    IF TG_OP = 'UPDATE' THEN
        counted := cofre_transaction_row_add(NEW, 1, totals, months, categories, days);
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER transactions_row ON transactions;
CREATE TRIGGER transactions_row AFTER UPDATE OR DELETE ON transactions
FOR EACH ROW EXECUTE FUNCTION cofre_transaction_row();

-- The rows one statement inserted, added up once (cofre_transaction_rows_add).
CREATE FUNCTION cofre_transactions_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    counted BOOLEAN;
BEGIN
    IF EXISTS (SELECT 1 FROM added) THEN
        counted := cofre_transaction_rows_add(ARRAY(SELECT a::transactions FROM added a));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER transactions_inserted AFTER INSERT ON transactions
REFERENCING NEW TABLE AS added
FOR EACH STATEMENT EXECUTE FUNCTION cofre_transactions_inserted();
